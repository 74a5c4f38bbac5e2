"""`arrowgate log show` / `log export` on a log with a damaged row end in a Python
traceback (exit 1), where `log verify` names the row. README "Command line":
"never a traceback for bad input"; a person reads the log right after verify said
row N is bad, and gets a stack trace instead of the rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.unit.cli_process import demo_db, run


@pytest.mark.parametrize(("change", "verb"), [
    ("t = 'yesterday'", ["log", "show"]),
    ("t = 1e300", ["log", "show"]),
    ("chain = '[1'", ["log", "show", "--json"]),
    ("chain = '[1'", ["log", "export"]),
])
def test_a_damaged_row_is_no_traceback(tmp_path: Path, change: str, verb: list[str]) -> None:
    db = demo_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute(f"update log set {change} where seq = 2")
    conn.commit()
    conn.close()
    assert run("log", "verify", "--db", str(db)).returncode == 1  # verify names it
    done = run(*verb, "--db", str(db))
    assert "Traceback" not in done.stderr, done.stderr[-400:]
    assert done.stderr.startswith("arrowgate:") or done.returncode == 0
