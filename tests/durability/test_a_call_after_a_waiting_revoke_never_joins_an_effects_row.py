"""A call made after a revoke that waits for the write lock is decided after that revoke,
even when an effect's row takes the lock first (SPEC §4: a revoke takes effect for every
call made after it; the order round 26 gave operations waiting for the lock, `LockLine`).

The row of an effect carried out (`Context.write_settled`: a file call's, a fetch's) is
written whatever waits: it cannot be made again. When the lock goes it may open the
batch before the revoke waiting in line takes it; a call decided while that batch is
open must not join it under the grant being revoked.

Found by rv26: the call joined the effect's batch and was let through, before the
revoke that came first.
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
from tests.conftest import manifest, offer_install
from tests.durability.test_a_program_holding_the_sqlite_lock_never_stalls_the_loop import (
    WAIT_S,
    held,
)


class _GatedFiles:
    """A file handler held at a gate: the effect ends when the test says."""

    def __init__(self) -> None:
        self.started, self.release = asyncio.Event(), asyncio.Event()

    async def __call__(self, host: Any, passed: Any, args: dict[str, Any]) -> Any:
        self.started.set()
        await self.release.wait()
        return None


async def _world(engine: Engine, folder: Path) -> None:
    """Card c1 of acme.p (agents.prompt, fs.write) wired to agent a1."""
    (folder / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", folder / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}, "fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})


async def _race(engine: Engine, files: _GatedFiles, let_go: Any) -> None:
    """An effect under way; a revoke waiting for the lock another holds; the lock let go
    (from a thread: the effect's row may hold the loop for it) as the effect ends, and a
    call made after the revoke as the effect's row is written: refused, the row written."""
    effect = asyncio.ensure_future(
        engine.call("c1", "fs.writeText", None, {"path": "out.txt", "text": "x"}))
    await asyncio.wait_for(files.started.wait(), 5)
    revoke = asyncio.ensure_future(engine.revoke("acme.p", "agents.prompt"))
    await asyncio.sleep(0.1)
    assert not revoke.done()
    threading.Timer(0.2, let_go).start()
    # WHEN the effect ends, and a call is made after the revoke, as the lock goes
    files.release.set()

    async def arriving() -> Any:
        # A busy service's next call: it comes as the effect's row is written (while its
        # batch is open, if that stays open; else once the effect is done).
        while engine.store.batch is None and not effect.done():
            await asyncio.sleep(0)
        return await engine.call("c1", "agents.prompt", "a1", {"text": "after the revoke"})

    call = asyncio.ensure_future(arriving())
    await asyncio.wait_for(revoke, 10)
    decision = await asyncio.wait_for(call, 10)
    done = await asyncio.wait_for(effect, 10)
    # THEN the call was decided after the revoke: refused
    assert not decision.allowed, decision
    assert not engine.state.granted("acme.p", "agents.prompt")
    # AND the effect's row was written all the same
    assert done.outcome == "ok", done
    assert [r["outcome"] for r in engine.log_rows(card="c1", call="fs.writeText")] == ["ok"]
    assert engine.verify_log().ok


async def test_a_call_after_a_waiting_revoke_never_joins_an_effects_row_sqlite(
        tmp_path: Path) -> None:
    files = _GatedFiles()
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=files),
                         busy_timeout=WAIT_S)
    try:
        await _world(engine, tmp_path)
        with held(tmp_path / "a.db") as holder:
            assert holder.stdin is not None
            await _race(engine, files, holder.stdin.close)
    finally:
        engine.close()


@pytest.mark.postgres
async def test_a_call_after_a_waiting_revoke_never_joins_an_effects_row_postgres(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batches, "WRITE_LOCK_S", WAIT_S, raising=False)
    files = _GatedFiles()
    engine = Engine.open(store=pg_dsn, world=World(net=None, fs=files))
    try:
        await _world(engine, tmp_path)
        with psycopg.connect(pg_dsn) as shell:
            # A hand edit left uncommitted holds the store's write lock (m012's trigger).
            shell.execute("update nodes set data = data where id = 'a1'")
            await _race(engine, files, shell.rollback)
    finally:
        engine.close()
