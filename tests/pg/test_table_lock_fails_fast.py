"""A table another session holds locked fails the engine's operations closed within seconds.

Another session's ``LOCK TABLE`` (a person in psql, another process's migration)
makes the engine's statements on that table wait. A call on it fails closed with
`StoreFailed`, writes nothing, and so does the reload of the state that follows a
failure, each within the store's round-trip bound: never the two minutes a whole
state's load may take to read its rows, with the event loop (the service's every
request) held meanwhile. Once the lock is gone, calls go through again, on the same
engine.

Found in round 19: with ``LOCK TABLE log`` held, a call's insert failed after 3 s,
but the reload after it waited on the lock for the load's 120 s bound, the loop frozen.
"""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from engine.core.errors import StoreFailed
from tests.pg.test_store import _engine, _prompt_world

#: Well above the round-trip bound (3 s) and a lock wait, far below the load's 120 s.
BOUND_S = 12.0




def _rows(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("select count(*) from log").fetchone()
        assert row is not None
        return int(row[0])


@pytest.mark.parametrize("table", ["log", "prompts", "changes"])
async def test_a_locked_table_fails_calls_closed_within_seconds(pg_dsn: str, tmp_path: Path,
                                                                table: str) -> None:
    """Two calls while ``table`` is locked each fail closed within `BOUND_S` (the
    reload after each failure included) and write nothing; after, the engine works."""
    await _prompt_world(pg_dsn, tmp_path)
    engine = _engine(pg_dsn)
    try:
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "before"})).allowed
        rows = _rows(pg_dsn)
        with psycopg.connect(pg_dsn) as holder:
            holder.execute(f"lock table {table} in access exclusive mode")
            for text in ("one", "two"):
                started = time.monotonic()
                with pytest.raises(StoreFailed):
                    # The call runs up to its commit when made: time all of it.
                    await engine.call("c1", "agents.prompt", "a1", {"text": text})
                assert time.monotonic() - started < BOUND_S, text
        assert _rows(pg_dsn) == rows
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "after"})).allowed
        assert [r["payload"] for r in engine.log_rows(arrow="e1")] == ["before", "after"]
        assert engine.verify_log().ok
    finally:
        engine.close()
