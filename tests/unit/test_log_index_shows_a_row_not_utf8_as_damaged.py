"""A log row altered by hand to hold bytes that are not UTF-8 (a ``sqlite3`` shell's
``cast(x'ff' as text)``) is shown by the TUI's log reader (`LogIndex`) as damaged: the
rest of its text with those bytes replaced (U+FFFD), each such field flagged under
``unreadable`` with its stored bytes escaped — never an error that takes the whole view
down. ``log verify`` names the row (test_a_row_altered_to_bytes_not_utf8_is_a_finding);
``log export`` flags the field the same way.

SQLite only: a PostgreSQL database refuses text that is not of its encoding.

(Found in round 25: `LogIndex.page` and `row` raised "Could not decode to UTF-8 column
'payload'", so the TUI's arrow log failed on the first page holding such a row.)
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main
from engine.store.logindex import LogFilter, LogIndex


def _altered(tmp_path: Path) -> Path:
    db = tmp_path / "app.db"
    engine = Engine.open(db)
    try:
        asyncio.run(engine.create_workspace("w", str(tmp_path)))
        for _ in range(3):
            asyncio.run(engine.call("ghost", "agents.list"))
    finally:
        engine.close()
    conn = sqlite3.connect(db)
    try:
        conn.execute("update log set call = cast(x'41ff42' as text),"
                     " payload = cast(x'c3' as text) where seq = 2")
        conn.commit()
    finally:
        conn.close()
    return db


@pytest.mark.parametrize("log_filter", [None, LogFilter(card="ghost")], ids=["all", "card"])
def test_the_log_index_shows_a_row_not_utf8_as_damaged(
        tmp_path: Path, log_filter: LogFilter | None) -> None:
    """GIVEN a row edited to bytes not UTF-8 WHEN LogIndex pages it THEN it is shown with those
    fields flagged, never raised."""
    index = LogIndex(_altered(tmp_path), log_filter)
    try:
        assert index.refresh() == 3
        rows = index.page(0, 3)
        assert [r["seq"] for r in rows] == [1, 2, 3]
        damaged = rows[1]
        assert damaged["call"] == "A\ufffdB" and damaged["payload"] == "\ufffd"
        assert damaged["unreadable"] == {"call": "A\\xffB", "payload": "\\xc3"}, damaged
        assert type(damaged["call"]) is str  # plain text, as every other row's
        assert "unreadable" not in rows[0] and "unreadable" not in rows[2]
        assert index.row(2) == damaged
    finally:
        index.close()


def test_log_export_flags_a_field_not_utf8(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN a row edited to bytes not UTF-8 WHEN log export writes it THEN each such field is
    flagged under unreadable."""
    db = _altered(tmp_path)
    assert main(["log", "export", "--db", str(db)]) == 0, capsys.readouterr().err
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert records[1]["input"]["call"] == "A\ufffdB"
    assert records[1]["unreadable"] == {"call": "A\\xffB", "payload": "\\xc3"}, records[1]
    assert "unreadable" not in records[0]
