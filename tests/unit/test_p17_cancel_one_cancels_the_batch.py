"""p17: cancelling one caller of a consent operation cancels every other caller in its batch.

`run_durably` (engine/store/transactions.py, ``await joined.pop(0).future()``)
awaits the batch's one shared future (`Batch.future`). `Task.cancel()` cancels
the future a task is waiting on, so cancelling one caller (a `wait_for` timeout,
a client gone, a TaskGroup ending) cancels the batch's shared future, and every
other operation that joined the same group commit gets `CancelledError` — though
nobody cancelled it and its change was committed. (Calls are spared: `run_eagerly`
gives each caller a future of its own, `Batch.answers`.)
"""

from __future__ import annotations

import asyncio
from typing import Any

from engine import Engine, World
from tests.conftest import manifest, offer_install


async def test_cancelling_one_operation_leaves_the_others_in_its_batch_answered(
        make_engine: Any, tmp_path: Any, db_path: Any) -> None:
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
    finally:
        again.close()
