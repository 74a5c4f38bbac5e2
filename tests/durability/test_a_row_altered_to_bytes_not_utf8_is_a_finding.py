"""A log row or consent-history entry altered by hand to hold bytes that are not UTF-8 (a
``sqlite3`` shell's ``cast(x'ff' as text)``) is a finding of ``log verify``, naming the
row and the column, exit 1 — as any other altered row is — never "the database cannot be
used" (exit 2), which a script would take for a database it cannot read rather than one
tampered with; ``log show`` and ``log export`` still show the rest, the bytes replaced.

SQLite only: a PostgreSQL database refuses text that is not of its encoding.

(Found in round 25: `log verify` answered "Could not decode to UTF-8 column 'payload'",
exit 2, as did `log show` and `log export`.)
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main


def _database(tmp_path: Path) -> Path:
    db = tmp_path / "app.db"
    engine = Engine.open(db)
    try:
        asyncio.run(engine.create_workspace("w", str(tmp_path)))
        for _ in range(3):
            asyncio.run(engine.call("ghost", "agents.list"))
    finally:
        engine.close()
    return db


def _alter(db: Path, sql: str) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


@pytest.mark.parametrize("as_json", [False, True])
def test_a_log_row_altered_to_bytes_not_utf8_is_a_finding(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], as_json: bool) -> None:
    db = _database(tmp_path)
    _alter(db, "update log set call = cast(x'41ff42' as text) where seq = 2")
    code = main(["log", "verify", "--db", str(db), *(["--json"] if as_json else [])])
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    if as_json:
        verdict = json.loads(out)
        assert verdict["ok"] is False and verdict["first_bad"] == 2, verdict
        assert "call" in verdict["problem"] and "UTF-8" in verdict["problem"], verdict
    else:
        assert "first bad row 2" in out and "call" in out and "UTF-8" in out, out


def test_a_history_entry_altered_to_bytes_not_utf8_is_a_finding(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _database(tmp_path)
    _alter(db, "update consent set action = cast(x'ff' as text) where seq = 1")
    assert main(["log", "verify", "--db", str(db)]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "consent" in out and "UTF-8" in out, out


def test_show_and_export_read_the_rest(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    db = _database(tmp_path)
    _alter(db, "update log set payload = cast(x'41ff42' as text) where seq = 2")
    assert main(["log", "export", "--db", str(db)]) == 0, capsys.readouterr().err
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert records[1]["input"]["payload"] == "A\ufffdB"
    assert main(["log", "show", "--db", str(db)]) == 0
    assert "A\ufffdB" in capsys.readouterr().out
