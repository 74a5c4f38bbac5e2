"""A store that cannot be reached is unusable input (exit 2), never a finding (exit 1).

``arrowgate log verify`` exits 1 when the log fails verification: a script reads
1 as "tampered". A ``--store`` whose server cannot be reached says nothing about
the log, so it is exit 2 ("a missing or unusable database", README "Command
line"), as a store holding another schema or none already is, and as the write
verbs say of a service that cannot be reached.

(Found in round 24: ``log verify --store postgresql://127.0.0.1:1/x`` exited 1, the
exit code of a log that fails verification.)
"""

from __future__ import annotations

import json
import socket

import pytest

from engine.app.cli import main


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("verb", [["log", "verify"], ["log", "show"], ["log", "export"]])
def test_an_unreachable_store_is_exit_2(verb: list[str],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    url = f"postgresql://arrowgate@127.0.0.1:{_closed_port()}/nowhere?connect_timeout=5"
    assert main([*verb, "--store", url]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "cannot" in err and "STORE_FAILED" in err


def test_an_unreachable_store_under_json(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"postgresql://arrowgate@127.0.0.1:{_closed_port()}/nowhere?connect_timeout=5"
    assert main(["log", "verify", "--store", url, "--json"]) == 2
    out, err = capsys.readouterr()
    error = json.loads(err)["error"]
    assert out == "" and error["code"] == "STORE_FAILED" and error["reason"] == "connection"


@pytest.mark.parametrize("verb", [
    ["log", "verify"], ["token", "list"],
    ["serve", "--token-file", "{tmp}/token", "--socket", "{tmp}/s.sock"],
])
def test_an_unreachable_store_is_told_on_one_line(verb: list[str], tmp_path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The server's refusal is one line on stderr, as every error is (README "Command
    line"): libpq's hint after a line break and a tab ("\\n\\tIs the server running on
    that host …") is joined to it (round 31: it was a second line starting ``␉``)."""
    url = f"postgresql://arrowgate@127.0.0.1:{_closed_port()}/nowhere?connect_timeout=5"
    argv = [word.replace("{tmp}", str(tmp_path)) for word in verb]
    assert main([*argv, "--store", url]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Connection refused" in err, err
    assert err.count("\n") == 1 and "\t" not in err and "␉" not in err, err
    assert "Is the server running" in err, err
