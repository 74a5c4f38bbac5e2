"""``arrowgate serve`` refused before it starts is exit 2, one line, nothing made.

README "Command line": exit 2 is a usage error or invalid input, 1 a finding or a
refusal of consent; every verb follows it. What ``serve`` refuses at its start is what
it was given — an address that is no ``HOST:PORT``, a host name, a socket path taken
by another server or by a file, a token file that is the database — as ``--socket``
with ``--listen`` together already was (2).

(Found in round 28: these ended the process through ``SystemExit`` with their line, which
Python turns into exit status 1, the code of a finding: a script could not tell "you
gave me a wrong address" from "a refusal".)
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from engine.app.cli import main


def test_a_refused_start_is_exit_2_with_one_line(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "app.db")
    taken = tmp_path / "taken.sock"
    other = socket.socket(socket.AF_UNIX)  # another server, listening there
    other.bind(str(taken))
    other.listen()
    (tmp_path / "file.sock").write_text("not a socket")
    try:
        for argv, said in (
                (["--listen", "8377"], "--listen takes HOST:PORT"),
                (["--listen", "arrowgate-test.invalid:0"], "IP address"),
                (["--socket", str(taken)], f"another server listens on {taken}"),
                (["--socket", str(tmp_path / "file.sock")], "exists and is not a socket"),
                (["--listen", "127.0.0.1:0", "--token-file", db], "database")):
            assert main(["serve", "--db", db, *argv]) == 2, argv
            out, err = capsys.readouterr()
            assert out == "" and err.startswith("arrowgate: ") and said in err, (argv, err)
            assert len(err.splitlines()) == 1, err
    finally:
        other.close()
    # Nothing made: no database, token file or socket folder.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.sock", "taken.sock"]
