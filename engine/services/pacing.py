"""A workspace's prompt budget (SPEC §6): the leaky bucket that paces delivery."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["Budget"]


class Budget:
    """At most ``rate`` deliveries in any ``period`` seconds, sustained, with bursts
    up to ``rate``: a leaky bucket that drains ``rate / period`` a second.

    It counts as aiolimiter's ``AsyncLimiter(rate, period)`` does, but takes
    room without a coroutine (`take`): the pump asks for every prompt it
    delivers, and almost always there is room at once.

    Args:
        rate: deliveries the bucket holds (at least 1).
        period: seconds the bucket takes to drain when full (above 0).
        clock: monotonic seconds (the event loop's own clock by default).
    """

    __slots__ = ("_clock", "_drain", "_last", "_level", "rate")

    def __init__(self, rate: float, period: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self._drain = rate / period
        self._level = 0.0
        self._last = 0.0
        self._clock = clock

    def _leak(self) -> None:
        # What has drained since the last look.
        now = self._clock()
        if self._level:
            self._level = max(self._level - (now - self._last) * self._drain, 0.0)
        self._last = now

    def take(self) -> bool:
        """Take room for one delivery when there is room now; else False, taking nothing."""
        self._leak()
        if self._level + 1 > self.rate:
            return False
        self._level += 1
        return True

    def wait(self) -> float:
        """Seconds until there is room for one delivery (0 when there is now)."""
        self._leak()
        return max(self._level + 1 - self.rate, 0.0) / self._drain

    async def acquire(self) -> None:
        """Wait until there is room for one delivery, then take it."""
        while not self.take():
            await asyncio.sleep(self.wait())
