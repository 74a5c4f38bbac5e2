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

    async def nap(self, key: str, timeout: float) -> None:
        """Sleep until `wake` names ``key`` or ``timeout`` seconds pass."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._futures.setdefault(key, []).append(fut)
        try:
            await asyncio.wait_for(fut, timeout=timeout)
        except TimeoutError:
            pass
        finally:
            futures = self._futures.get(key)
            if futures is not None and fut in futures:
                futures.remove(fut)
                if not futures:
                    del self._futures[key]

    def wake(self, ready: Callable[[str], bool]) -> None:
        """Wake everyone waiting on a key for which ``ready`` is true."""
        for key in [k for k in self._futures if ready(k)]:
            for fut in self._futures.pop(key):
                if not fut.done():
                    fut.set_result(None)
