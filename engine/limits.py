"""Rolling-window rate limits (SPEC §6): exact sliding logs, not leaky buckets.

A call at time t is allowed when fewer than N counted calls of its key lie in
the half-open window (t − P, t]; otherwise it is refused with
``retry_after = oldest + P − t``. Only calls that passed every earlier check
are counted, by the caller calling `count`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from .catalogue import RATE_LIMITS, RateLimit

__all__ = ["RateCounters", "RollingWindow"]


class RollingWindow:
    """The accepted call times of one (card, key), oldest first."""

    __slots__ = ("limit", "period", "times")

    def __init__(self, limit: int, period: float) -> None:
        self.limit = limit
        self.period = period
        self.times: deque[float] = deque()

    def _drop_old(self, t: float) -> None:
        # Times at or before t − P have left the half-open window (t − P, t].
        # Written as x + P <= t, the same arithmetic retry_after uses, so a
        # refused call always gets a positive retry_after despite rounding.
        while self.times and self.times[0] + self.period <= t:
            self.times.popleft()

    def retry_after(self, t: float) -> float | None:
        """None when a call at ``t`` fits, else the seconds until one would.

        Pure: asking about any time changes nothing (pruning happens in
        `count`, which keeps at most about ``limit`` times here).
        """
        inside = [x for x in self.times if t < x + self.period and x <= t]
        if len(inside) < self.limit:
            return None
        # The next call fits once the limit-th newest call inside has left.
        return inside[len(inside) - self.limit] + self.period - t

    def count(self, t: float) -> None:
        """Record an accepted call at ``t`` (times never decrease)."""
        self._drop_old(t)
        self.times.append(t)


class RateCounters:
    """Every card's rolling windows, by rate key."""

    def __init__(self, limits: dict[str, RateLimit] | None = None) -> None:
        self.limits = limits if limits is not None else RATE_LIMITS
        self._windows: dict[tuple[str, str], RollingWindow] = {}

    def _window(self, card: str, key: str) -> RollingWindow:
        window = self._windows.get((card, key))
        if window is None:
            spec = self.limits[key]
            window = self._windows[(card, key)] = RollingWindow(spec.limit, spec.period)
        return window

    def retry_after(self, card: str, key: str, t: float) -> float | None:
        """None when ``card`` may make a call of ``key`` at ``t``, else seconds to wait."""
        return self._window(card, key).retry_after(t)

    def count(self, card: str, key: str, t: float) -> None:
        """Count an accepted call."""
        self._window(card, key).count(t)

    def load(self, rows: Iterable[tuple[str, str, float]]) -> None:
        """Restore counted calls (card, key, t), oldest first, after a restart."""
        for card, key, t in rows:
            if key in self.limits:
                self._window(card, key).count(t)

    def forget(self, card: str) -> None:
        """Drop a removed card's windows."""
        for key in [k for k in self._windows if k[0] == card]:
            del self._windows[key]
