"""`--token-file` naming an existing file that is not a token file (the database, notes) is refused and the file left as it is.

(Found by a hostile test, round 14, when it did not hold: it was replaced by the new token: the database too.)

`operator_token` finds no valid token in the file, mints one and `os.replace`s
the file with it: `--token-file` naming the database itself destroys the
database (the server then says `ready` on an unlinked file; everything is gone at
the next start), and naming any other file (notes, a config) loses its content.
A start-up that cannot write the token where asked without destroying something
should refuse with a one-line error and change nothing.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def _serve(*args: str) -> tuple[int | None, str]:
    proc = subprocess.Popen([*ARROWGATE, "serve", "--listen", "127.0.0.1:0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if first:
        proc.stdout.readline()
        proc.terminate()
    _out, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_token_file_naming_the_database_does_not_destroy_it(tmp_path) -> None:
    db = tmp_path / "a.db"
    _serve("--db", str(db))  # an arrowgate database with its tables
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert tables
    _serve("--db", str(db), "--token-file", str(db))
    assert db.read_bytes()[:16] == b"SQLite format 3\x00", \
        f"the database was replaced by: {db.read_bytes()[:60]!r}"


def test_token_file_naming_an_unrelated_file_keeps_its_content(tmp_path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a token\n")
    _serve("--db", str(tmp_path / "a.db"), "--token-file", str(notes))
    assert notes.read_text() == "my notes, not a token\n"
