"""Callers waiting for something an operation will change: woken when its batch commits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["Waiters"]


class Waiters:
    """Futures by key (a prompt's or a tool call's id).

    A waiter naps until it is woken or its timeout passes, then looks again;
    either way its future is gone afterwards, so a caller waiting for hours
    leaves nothing behind but its one current nap.
    """

    def __init__(self) -> None:
        self._futures: dict[str, list[asyncio.Future[None]]] = {}

    def __len__(self) -> int:
        return sum(len(futures) for futures in self._futures.values())

    def __contains__(self, key: str) -> bool:
        """True while someone waits on ``key``."""
        return key in self._futures

    async def nap(self, key: str, timeout: float) -> None:
        """Sleep until `wake` names ``key`` or ``timeout`` seconds pass."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._futures.setdefault(key, []).append(fut)
        # The timeout settles the same future a wake would: awaited directly, a wake
        # reaches the caller in the next turn of the loop (``asyncio.wait_for`` would
        # take one more, on a tool call's critical path; issue 17).
        timer = loop.call_later(max(0.0, timeout), _settle, fut)
        try:
            await fut
        finally:
            timer.cancel()
            futures = self._futures.get(key)
            if futures is not None and fut in futures:
                futures.remove(fut)
                if not futures:
                    del self._futures[key]

    def wake(self, ready: Callable[[str], bool]) -> None:
        """Wake everyone waiting on a key for which ``ready`` is true."""
        for key in [k for k in self._futures if ready(k)]:
            for fut in self._futures.pop(key):
                _settle(fut)


    def wake_all(self) -> None:
        """Wake everyone (the engine closed: each then finds out for itself)."""
        self.wake(lambda _key: True)


def _settle(fut: asyncio.Future[None]) -> None:
    """End a nap (woken, or its time is up); a nap already ended stays as it is."""
    if not fut.done():
        fut.set_result(None)
