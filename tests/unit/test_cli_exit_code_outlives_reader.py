"""A verb's exit code stands when the reader of its standard output went away: a
finding is exit 1 even when `arrowgate log verify | head …` closed the pipe, and a
plain `arrowgate log show | head -1` stays 0, with nothing on standard error.

(Found by a helper: a closed pipe turned a finding into exit 0 — `log verify` of a
tampered log and `diff` of a widening update, README "Command line".)"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

from tests.unit.cli_process import ARROWGATE, demo_db


def _closed_pipe_run(*args: str) -> int:
    """Run `arrowgate ARGS` with standard output a pipe whose reader is already gone."""
    return _closed_pipe_process(*args).returncode


def _closed_pipe_process(*args: str) -> subprocess.CompletedProcess[str]:
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([ARROWGATE, *args], stdin=subprocess.DEVNULL, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    return done


def test_a_verify_finding_stands_when_the_reader_is_gone(tmp_path: Path) -> None:
    db = demo_db(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("update log set payload = 'forged' where seq = 2")
    conn.commit()
    conn.close()
    assert subprocess.run([ARROWGATE, "log", "verify", "--db", str(db)],
                          capture_output=True, timeout=60).returncode == 1
    assert _closed_pipe_run("log", "verify", "--db", str(db)) != 0


def test_a_widening_diff_stands_when_the_reader_is_gone(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text('{"name": "a.b", "version": "1.0.0", "permissions": {}}')
    new.write_text('{"name": "a.b", "version": "1.0.1", "permissions": {"fs.write": {}}}')
    assert subprocess.run([ARROWGATE, "diff", str(old), str(new)],
                          capture_output=True, timeout=60).returncode == 1
    assert _closed_pipe_run("diff", str(old), str(new)) != 0


def test_log_show_into_a_closed_pipe_is_ok_and_quiet(tmp_path: Path) -> None:
    db = demo_db(tmp_path)
    for verb in (["log", "show"], ["log", "export"]):
        done = _closed_pipe_process(*verb, "--db", str(db))
        assert (done.returncode, done.stderr) == (0, ""), verb
