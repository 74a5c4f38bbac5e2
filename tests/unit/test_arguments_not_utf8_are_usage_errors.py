"""An id, a name or a filter given as bytes that are not UTF-8 (``$'\\xff'`` at a shell,
a name a script read from a file) is a usage error naming the argument, exit 2 — never a
``UnicodeEncodeError`` traceback from the store or the service's client. A file's path may
hold such bytes (a file can be named so) and is read as before.

(Found in round 25: ``log show --card $'\\xff'``, ``hold reject $'\\xff'`` and ``package
review $'\\xff' --service S`` ended in tracebacks, exit 1.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main
from engine.effects.operator import OperatorCheck

BAD = b"\xffid".decode("utf-8", "surrogateescape")  # as Python reads such an argv


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    path = tmp_path / "a.db"
    Engine.open(path).close()
    return str(path)


def _service(tmp_path: Path) -> list[str]:
    token = tmp_path / "tok"
    token.write_text("t0k3n")
    os.chmod(token, 0o600)
    return ["--service", str(tmp_path / "none.sock"), "--token-file", str(token)]


@pytest.mark.parametrize("argv", [
    ["log", "show", "--card", BAD], ["log", "export", "--arrow", BAD],
    ["log", "show", "--json", "--package", BAD], ["log", "export", "--call", BAD],
    ["reach", BAD], ["export", "--workspace", BAD],
    ["hold", "reject", BAD], ["hold", "approve", BAD, "--sha256", "0" * 64],
    ["package", "review", BAD], ["package", "revoke", "acme.x", BAD],
    ["call", "c1", BAD], ["node", "add", "w1", "n1", "note", "--set", f"text={BAD}"],
    ["arrow", "add", "w1", "e1", BAD, "n2"],
], ids=lambda v: " ".join(v).replace(BAD, "<ff>"))
def test_an_argument_that_is_not_utf8_is_a_usage_error(
        db: str, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code = main([*argv, "--db", db])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    assert "UTF-8" in err.splitlines()[-1], err  # after argparse's usage, one error line
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["package", "review", BAD], ["hold", "reject", BAD],
                                  ["node", "remove", BAD]])
def test_through_the_service_too(tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str],
                                 argv: list[str]) -> None:
    code = main([*argv, *_service(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    assert "UTF-8" in json.loads(err)["error"]["message"]


def test_a_path_of_such_bytes_is_still_read(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A manifest file whose name is not UTF-8 is reviewed as any other."""
    name = os.fsdecode(b"m\xff.json")
    (tmp_path / name).write_text(json.dumps({"name": "acme.x", "version": "1.0.0",
                                             "permissions": {}}))
    assert main(["review", str(tmp_path / name)]) == 0, capsys.readouterr().err
    assert "acme.x" in capsys.readouterr().out
