"""The workspace budget's leaky bucket (SPEC §6), on a clock the test moves."""

from __future__ import annotations

import asyncio

import pytest
from aiolimiter import AsyncLimiter

from engine.services.pacing import Budget


class Clock:
    """Seconds that move only when told."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_bursts_up_to_the_rate_then_room_drains_back_at_rate_per_period() -> None:
    clock = Clock()
    budget = Budget(2, 2.0, clock)  # drains one delivery a second
    assert budget.take() and budget.take()
    assert not budget.take()  # full: nothing taken
    assert budget.wait() == pytest.approx(1.0)
    clock.t += 0.5
    assert not budget.take() and budget.wait() == pytest.approx(0.5)
    clock.t += 0.5
    assert budget.take() and not budget.take()
    clock.t += 10.0  # empty again, and no more than empty: a burst of 2, not 12
    assert budget.wait() == 0.0
    assert [budget.take() for _ in range(3)] == [True, True, False]


async def test_counts_as_aiolimiter_counts() -> None:
    """Taken or not, step by step, as aiolimiter's AsyncLimiter (the SPEC's leaky bucket)."""
    clock = Clock()

    class Loop:
        def time(self) -> float:
            return clock.t

        def is_closed(self) -> bool:
            return False

    ours, theirs = Budget(3, 1.5, clock), AsyncLimiter(3, 1.5)
    # aiolimiter reads the time from the loop it bound to: the test's clock instead.
    theirs._event_loop = Loop()  # type: ignore[assignment]
    for step in [0.0, 0.0, 0.1, 0.0, 0.3, 0.2, 0.0, 1.0, 0.0, 0.0, 0.0, 0.05, 0.6]:
        clock.t += step
        room = theirs.has_capacity()
        if room:
            await theirs.acquire()  # with room it takes it at once, never waiting
        assert ours.take() is room


async def test_acquire_waits_until_there_is_room(monkeypatch: pytest.MonkeyPatch) -> None:
    clock, slept = Clock(), []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.t += seconds

    monkeypatch.setattr(asyncio, "sleep", sleep)
    budget = Budget(2, 4.0, clock)
    await budget.acquire()
    await budget.acquire()
    assert slept == []  # room at once: no wait
    clock.t += 0.5
    await budget.acquire()  # full: waits for the rest of the 2 s one delivery drains in
    assert slept == [pytest.approx(1.5)]
    assert not budget.take()
