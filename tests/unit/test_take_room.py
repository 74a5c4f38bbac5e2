"""The pump takes budget room without waiting (`engine.services.prompts.take_room`)."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from aiolimiter import AsyncLimiter

from engine.services.prompts import take_room


async def test_room_is_taken_until_the_bucket_is_full() -> None:
    """Each room taken counts as aiolimiter's own acquire does; a full bucket takes none."""
    limiter = AsyncLimiter(2, 60.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no acquire left un-awaited
        assert take_room(limiter) and take_room(limiter)
        assert not take_room(limiter)
        assert not take_room(limiter)  # a refusal took nothing, and left no waiter behind
    assert not limiter.has_capacity()


async def test_what_take_room_takes_an_acquire_waits_for() -> None:
    """Room it took is gone for aiolimiter's own waiters, and room they took is gone for it."""
    limiter = AsyncLimiter(1, 60.0)
    assert take_room(limiter)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(limiter.acquire(), 0.05)
    other = AsyncLimiter(1, 60.0)
    await other.acquire()
    assert not take_room(other)
