"""The write verbs take the operator's ``--token-file`` only when it is private: a regular
file of this user's that group and others may neither read nor write, as ssh judges a
private key and as ``arrowgate mcp`` judges its agent token. Any other is refused before
anything is sent (exit 2), naming the file and its mode (or its owner).

(Found in round 25: a token file of mode 0644 — readable by every user of the machine,
who could then act as the operator — was used silently, though ``arrowgate serve`` writes
its own 0600.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.app.cli import main


def _token(tmp_path: Path, mode: int, name: str = "op.token") -> Path:
    path = tmp_path / name
    path.write_text("t0k3n\n")
    os.chmod(path, mode)
    return path


def _list(tmp_path: Path, *extra: str) -> list[str]:
    # No service listens there: a token that is taken goes on to "cannot reach".
    return ["hold", "list", "--service", str(tmp_path / "serve.sock"), *extra]


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o666])
def test_a_token_file_others_may_read_or_write_is_refused_naming_its_mode(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int) -> None:
    """GIVEN a token file group or others may read or write WHEN a write verb uses it THEN
    exit 2, naming the file and its mode, nothing sent."""
    token = _token(tmp_path, mode)
    assert main(_list(tmp_path, "--token-file", str(token))) == 2
    out, err = capsys.readouterr()
    assert out == "" and str(token) in err and f"{mode:04o}" in err, err
    assert "cannot reach the service" not in err
    assert "chmod 600" in err


def test_the_default_token_file_is_judged_the_same(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN the database's .operator-token of mode 0644 WHEN --token-file is not given
    THEN it is refused as a named one is."""
    token = _token(tmp_path, 0o644, "a.db.operator-token")
    assert main(_list(tmp_path, "--db", str(tmp_path / "a.db"))) == 2
    err = capsys.readouterr().err
    assert str(token) in err and "0644" in err, err


def test_under_json_the_refusal_is_one_json_object(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    token = _token(tmp_path, 0o644)
    assert main(_list(tmp_path, "--token-file", str(token), "--json")) == 2
    out, err = capsys.readouterr()
    message = json.loads(err)["error"]["message"]
    assert out == "" and str(token) in message and "0644" in message


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_private_token_file_is_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       mode: int) -> None:
    """GIVEN a token file only its owner may read WHEN used THEN the verb goes on to the
    service (none listens here)."""
    token = _token(tmp_path, mode)
    assert main(_list(tmp_path, "--token-file", str(token))) == 2
    assert "cannot reach the service" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another user needs root")
def test_a_token_file_of_another_user_is_refused(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    token = _token(tmp_path, 0o600)
    os.chown(token, 65534, 65534)
    assert main(_list(tmp_path, "--token-file", str(token))) == 2
    err = capsys.readouterr().err
    assert str(token) in err and "65534" in err and "cannot reach" not in err, err


def test_a_database_given_as_the_token_file_is_told_it_is_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN the database (mode 0644, far larger than a token) as --token-file WHEN a write
    verb uses it THEN exit 2 saying it is no token file, never to chmod it (round 34: the
    advice was "make it private: chmod 600 app.db")."""
    db = tmp_path / "app.db"
    db.write_bytes(b"SQLite format 3\x00" + bytes(200_000))
    os.chmod(db, 0o644)
    assert main(_list(tmp_path, "--token-file", str(db))) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"the token file {db} is larger than 4096 bytes" in err, err
    assert "it is no token file" in err and "chmod" not in err, err
    assert "cannot reach the service" not in err
