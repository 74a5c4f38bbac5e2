"""The row of an effect carried out (a file call's, a fetch's) waits for the write lock
another program or session holds off the event loop, then is written (SPEC §8: nothing a
card was allowed to do goes unlogged; §10 "Storage": another program's lock never stalls
the engine), on both stores.

Found by rv26: such a row (`Context.write_settled`, which cannot be made again later)
waited for the lock on the loop, up to the store's whole bound — 10 s of a service
answering nothing, health included — each time an effect ended while a shell held it.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest

import engine.store.pg.batches as batches
from engine import Engine, World
from tests.durability.test_a_call_after_a_waiting_revoke_never_joins_an_effects_row import (
    _GatedFiles,
    _world,
)
from tests.durability.test_a_program_holding_the_sqlite_lock_never_stalls_the_loop import (
    WAIT_S,
    held,
)
from tests.pg.test_a_session_holding_a_lock_never_hangs_the_engine import (
    LOOP_GAP_S,
    _longest_gap,
)


async def _row_while_locked(engine: Engine, files: _GatedFiles, let_go: Any) -> None:
    """An effect under way ends while another holds the write lock, let go (from a thread:
    the loop may be held) within the bound: the loop runs on, the row is written."""
    effect = asyncio.ensure_future(
        engine.call("c1", "fs.writeText", None, {"path": "out.txt", "text": "x"}))
    await asyncio.wait_for(files.started.wait(), 5)
    threading.Timer(0.8, let_go).start()

    async def ended() -> Any:
        # WHEN the effect ends while the lock is taken
        files.release.set()
        return await asyncio.wait_for(effect, 10)

    gap, done = await _longest_gap(ended)
    # THEN the loop ran on meanwhile, and the row was written once the lock went
    assert gap < LOOP_GAP_S, gap
    assert done.outcome == "ok", done
    assert [r["outcome"] for r in engine.log_rows(card="c1", call="fs.writeText")] == ["ok"]
    assert engine.verify_log().ok


async def test_an_effects_row_waits_for_the_lock_off_the_loop_sqlite(tmp_path: Path) -> None:
    files = _GatedFiles()
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=files),
                         busy_timeout=WAIT_S)
    try:
        await _world(engine, tmp_path)
        with held(tmp_path / "a.db") as holder:
            assert holder.stdin is not None
            await _row_while_locked(engine, files, holder.stdin.close)
    finally:
        engine.close()


@pytest.mark.postgres
async def test_an_effects_row_waits_for_the_lock_off_the_loop_postgres(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batches, "WRITE_LOCK_S", WAIT_S, raising=False)
    files = _GatedFiles()
    engine = Engine.open(store=pg_dsn, world=World(net=None, fs=files))
    try:
        await _world(engine, tmp_path)
        with psycopg.connect(pg_dsn) as shell:
            # A hand edit left uncommitted holds the store's write lock (m012's trigger).
            shell.execute("update nodes set data = data where id = 'a1'")
            await _row_while_locked(engine, files, shell.rollback)
    finally:
        engine.close()
