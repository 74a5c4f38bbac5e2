"""A finding's exit code is lost when standard output is a pipe its reader closed:
`arrowgate log verify | head …` / `… | logger` on a tampered log exits 0, and so
does `arrowgate diff` of a widening update. README "Command line": exit 1 for a
finding; a closed pipe is no reason to report success."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

from tests.unit.cli_process import ARROWGATE, demo_db


def _closed_pipe_run(*args: str) -> int:
    """Run `arrowgate ARGS` with standard output a pipe whose reader is already gone."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([ARROWGATE, *args], stdin=subprocess.DEVNULL, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    return done.returncode


def test_verify_of_a_tampered_log_never_exits_0(tmp_path: Path) -> None:
    db = demo_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("update log set payload = 'forged' where seq = 2")
    conn.commit()
    conn.close()
    assert subprocess.run([ARROWGATE, "log", "verify", "--db", str(db)],
                          capture_output=True, timeout=60).returncode == 1
    assert _closed_pipe_run("log", "verify", "--db", str(db)) != 0


def test_a_widening_diff_never_exits_0(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text('{"name": "a.b", "version": "1.0.0", "permissions": {}}')
    new.write_text('{"name": "a.b", "version": "1.0.1", "permissions": {"fs.write": {}}}')
    assert subprocess.run([ARROWGATE, "diff", str(old), str(new)],
                          capture_output=True, timeout=60).returncode == 1
    assert _closed_pipe_run("diff", str(old), str(new)) != 0
