"""`arrowgate log show` / `log export` show a damaged log row with what can be shown
(a time that is no time as its raw value, marked) and never end in a traceback:
`log verify` names the row, and a person reads the log right after.

(Found by a helper: a row whose `t` was text or 1e300 ended `log show` in a Python
traceback, README "Command line": "never a traceback for bad input". The `chain`
cases need the log's JSON decoding to tolerate a damaged `chain`, fixed on branch a16.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.unit.cli_process import demo_db, run


@pytest.mark.parametrize(("change", "verb"), [
    ("t = 'yesterday'", ["log", "show"]),
    ("t = 1e300", ["log", "show"]),
    ("t = NULL", ["log", "show"]),
    ("t = 'yesterday'", ["log", "export"]),
    ("hash = 7", ["log", "show", "--json"]),
    ("chain = '[1'", ["log", "show", "--json"]),
    ("chain = '[1'", ["log", "export"]),
])
def test_a_damaged_row_is_shown_never_a_traceback(tmp_path: Path, change: str, verb: list[str]) -> None:
    db = demo_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(f"update log set {change} where seq = 2")
    conn.commit()
    conn.close()
    assert run("log", "verify", "--db", str(db)).returncode == 1  # verify names it
    done = run(*verb, "--db", str(db))
    assert "Traceback" not in done.stderr, done.stderr[-400:]
    assert done.stderr.startswith("arrowgate:") or done.returncode == 0


def test_a_time_that_is_no_time_is_shown_raw_and_marked(tmp_path: Path) -> None:
    db = demo_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("update log set t = 'yesterday' where seq = 2")
    conn.commit()
    conn.close()
    done = run("log", "show", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "?yesterday (not a time)" in done.stdout
    assert len(done.stdout.splitlines()) > 3  # the other rows are shown too
