"""Cancelling one caller of a group commit stops only that caller's wait.

Operations arriving together share one commit (`Batch`); each waits on it
through `Batch.committed`, a shield of the batch's one future. A caller
cancelled (its ``wait_for`` timing out, a client gone) stops waiting; every
other caller of the batch gets its own answer, and every change, the cancelled
caller's too, is committed.

(Found by a helper: `run_durably` awaited the shared future itself, so
cancelling one caller cancelled it, and every other caller got CancelledError.)
"""

from __future__ import annotations

import asyncio
from typing import Any

from engine import Engine, World
from tests.conftest import manifest, offer_install


async def test_cancelling_one_operation_leaves_the_others_in_its_batch_answered(
        make_engine: Any, tmp_path: Any, db_path: Any) -> None:
    """One of three operations sharing a commit is cancelled: the two others are answered."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"cards.connected": {}}))
    # GIVEN three operations of three callers sharing one group commit
    mine = asyncio.create_task(engine.add_node({"id": "n1", "type": "note"}, workspace="w1"))
    other = asyncio.create_task(engine.add_node({"id": "n2", "type": "note"}, workspace="w1"))
    revoke = asyncio.create_task(engine.revoke("acme.p", "cards.connected"))
    await asyncio.sleep(0)  # each has written and waits for the commit
    # WHEN the first caller is cancelled (its own wait_for timed out, say)
    mine.cancel()
    results = await asyncio.gather(mine, other, revoke, return_exceptions=True)
    assert isinstance(results[0], asyncio.CancelledError)
    # THEN the others, whom nobody cancelled, are answered with their own results
    assert not isinstance(results[1], BaseException), repr(results[1])
    assert not isinstance(results[2], BaseException), repr(results[2])
    # (their changes were committed all the same)
    engine.close()
    again = Engine.open(db_path, world=World(net=None, fs=None))
    try:
        assert again.state.canvas.node("n2") is not None
        assert again.state.canvas.node("n1") is not None  # the cancelled caller's too
    finally:
        again.close()
