"""A log row someone edited to bytes that are not UTF-8 (a ``sqlite3`` shell's
``cast(x'ff' as text)``) is read by the engine's own log reads — `Engine.log_rows`, and
through it the service's ``GET /v1/log`` and ``GET /v1/log/export`` — as the TUI's and the
command line's readers show it: each such field with those bytes replaced (U+FFFD) and
flagged under ``unreadable`` with its bytes escaped; ``POST /v1/log/verify`` names the row.
Never an error: one edited row must not make the whole log unreadable, least of all to the
person looking for what was edited.

SQLite only: a PostgreSQL database refuses text that is not of its encoding.

(Found in round 26: the engine's connection decoded every text column strictly, so
`log_rows` raised "Could not decode to UTF-8 column 'call'" and both routes answered 500.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine import Engine
from tests.unit.test_log_index_shows_a_row_not_utf8_as_damaged import _altered


def _damaged_as_shown(rows: list[dict[str, Any]]) -> None:
    assert [r["seq"] for r in rows] == [1, 2, 3]
    assert rows[1]["call"] == "A\ufffdB" and rows[1]["payload"] == "\ufffd"
    assert rows[1]["unreadable"] == {"call": "A\\xffB", "payload": "\\xc3"}, rows[1]
    assert "unreadable" not in rows[0] and "unreadable" not in rows[2]


def test_the_engine_reads_a_row_not_utf8_as_damaged(tmp_path: Path) -> None:
    engine = Engine.open(_altered(tmp_path))
    try:
        _damaged_as_shown(engine.log_rows())
        assert [r["seq"] for r in engine.log_rows(card="ghost", after=1, limit=1)] == [2]
        # Reads after it decode as ever: the marking is the log reads' alone.
        assert engine.state.workspaces["w"].folder == str(tmp_path)
        assert not engine.verify_log().ok
    finally:
        engine.close()


def test_the_service_serves_a_row_not_utf8_as_damaged(
        tmp_path: Path, serve_at: Callable[..., Any]) -> None:
    with serve_at(db=_altered(tmp_path)).client() as c:
        page = c.get("/v1/log")
        assert page.status_code == 200, page.text
        _damaged_as_shown(page.json()["rows"])
        export = c.get("/v1/log/export")
        assert export.status_code == 200, export.text
        records = [json.loads(line) for line in export.text.splitlines() if line]
        assert records[1]["unreadable"] == {"call": "A\\xffB", "payload": "\\xc3"}, records[1]
        verify = c.post("/v1/log/verify", json={})
        assert verify.status_code == 200 and verify.json()["ok"] is False, verify.text
