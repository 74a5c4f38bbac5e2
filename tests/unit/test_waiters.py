"""Waiting callers leave nothing behind: a waiter that times out is removed."""

from __future__ import annotations

import asyncio

from engine.services.waiters import Waiters


async def test_a_nap_that_times_out_leaves_no_future() -> None:
    waiters = Waiters()
    for _ in range(50):  # a caller looking again and again, as Engine.wait does
        await waiters.nap("p1", 0.001)
    assert len(waiters) == 0


async def test_wake_wakes_only_the_keys_that_are_ready() -> None:
    waiters = Waiters()
    first = asyncio.ensure_future(waiters.nap("p1", 5.0))
    second = asyncio.ensure_future(waiters.nap("p2", 5.0))
    await asyncio.sleep(0)
    assert len(waiters) == 2
    waiters.wake(lambda key: key == "p1")
    await asyncio.wait_for(first, 1.0)
    assert not second.done() and len(waiters) == 1
    waiters.wake(lambda key: True)
    await asyncio.wait_for(second, 1.0)
    assert len(waiters) == 0


async def test_a_cancelled_nap_leaves_no_future_and_a_wake_after_its_time_is_harmless() -> None:
    waiters = Waiters()
    napping = asyncio.ensure_future(waiters.nap("p1", 5.0))
    await asyncio.sleep(0)
    napping.cancel()
    await asyncio.gather(napping, return_exceptions=True)
    assert napping.cancelled() and len(waiters) == 0
    ended = asyncio.ensure_future(waiters.nap("p2", 0.0))
    await asyncio.sleep(0.01)
    assert ended.done() and len(waiters) == 0
    waiters.wake(lambda key: True)  # nothing left to wake


async def test_a_wake_reaches_the_napper_in_the_next_turn() -> None:
    waiters = Waiters()
    napping = asyncio.ensure_future(waiters.nap("p1", 5.0))
    await asyncio.sleep(0)
    waiters.wake(lambda key: True)
    await asyncio.sleep(0)  # one turn: the napper ran and returned
    assert napping.done()
