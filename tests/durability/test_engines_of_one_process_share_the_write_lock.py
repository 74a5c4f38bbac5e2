"""Two Engines of one process on one store, in one event loop, both write without
freezing the loop, on SQLite and on PostgreSQL alike; a hold approved through both
at once is approved exactly once, and the other approval is refused at once.

A batch holds the store's write lock (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's
`Lock.WRITE`) until its group commit, a turn of the loop later. A second engine of
the same process waiting for that lock waits on the very thread whose loop must
turn for it to be let go. Stores of one process on one database know one another
(`engine.store.siblings`): before taking the lock, a store commits the other's
batch open on its thread, as the loop's next turn would.

(Found in round 18: round 17 made SQLite's stores make way for each other, but
PostgreSQL's waited in ``pg_advisory_xact_lock`` for the whole lock_timeout (10 s),
the loop frozen, then failed with STORE_FAILED "canceling statement due to lock
timeout": every write of the second engine failed, and of a hold approved through
both engines at once one was approved and the other a STORE_FAILED 10 s later.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine.core.errors import NotFound
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target


async def test_two_engines_of_one_process_both_write_without_freezing_the_loop(
        target: Target, tmp_path: Path) -> None:
    """Writes of two engines on one store in the same turn of the loop all commit at once."""
    one, two = target.open(), target.open()
    try:
        (tmp_path / "ws").mkdir()
        await one.create_workspace("w1", tmp_path / "ws")
        two.catch_up()
        results: list[Any] = await asyncio.gather(*(
            (one if i % 2 else two).add_node({"id": f"n{i}", "type": "note"}, workspace="w1")
            for i in range(6)), return_exceptions=True)
        # (No clock: a write that waited for the other's lock would wait on this very
        # loop, so that lock could never be let go; it could only fail, STORE_FAILED,
        # once the lock's timeout ran out, which this assertion catches.)
        assert not any(isinstance(r, BaseException) for r in results), results
        # AND each engine sees every note, its own and the other's
        for engine in (one, two):
            engine.catch_up()
            assert sorted(n.id for n in engine.state.canvas.nodes(type="note")) == sorted(
                f"n{i}" for i in range(6))
    finally:
        one.close()
        two.close()


async def test_a_hold_approved_through_two_engines_at_once_is_approved_once(
        target: Target, tmp_path: Path) -> None:
    """One approval wins; the other is refused (the prompt is no longer held), at once."""
    one, two = target.open(), target.open()
    try:
        (tmp_path / "ws").mkdir()
        await one.create_workspace("w1", tmp_path / "ws")
        await offer_install(one, manifest("acme.p", {"agents.prompt": {}}))
        await one.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
        await one.add_node({"id": "y1", "type": "agent", "dangerous": True}, workspace="w1")
        await one.add_arrow({"id": "e1", "from": "c1", "to": "y1"})
        held = await one.call("c1", "agents.prompt", "y1", {"text": "deploy"})
        assert held.outcome == "held"
        two.catch_up()
        found = two.prompt(held.prompt)
        assert found is not None
        results: list[Any] = await asyncio.gather(
            one.approve_hold(held.prompt, text_sha256=found.text_sha256),
            two.approve_hold(held.prompt, text_sha256=found.text_sha256),
            return_exceptions=True)
        approved = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, BaseException)]
        assert [d.outcome for d in approved] == ["queued"], results
        # (Refused as no longer held, not STORE_FAILED at the lock's timeout: no clock
        # is needed to tell the two apart.)
        assert len(refused) == 1 and isinstance(refused[0], NotFound), results
        one.catch_up()
        assert [r["outcome"] for r in one.log_rows(arrow="e1")] == ["held", "approved"]
    finally:
        one.close()
        two.close()
