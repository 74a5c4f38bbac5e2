"""A driven node's screen made slow, as pyte is on a slow machine, and the loop's turns
counted while it is fed: what the share-of-the-loop tests of agents and terminals share."""

from __future__ import annotations

import asyncio
import time
from typing import Any

__all__ = ["SlowScreen"]


class SlowScreen:
    """Wraps ``driver``'s screen: each feed holds the loop's thread 10 ms, and is counted."""

    def __init__(self, driver: Any) -> None:
        self.feeds = 0
        self._feed = driver._screen.feed
        driver._screen.feed = self._slow_feed

    def _slow_feed(self, data: bytes) -> None:
        self.feeds += 1
        busy = time.thread_time() + 0.01
        while time.thread_time() < busy:
            pass
        self._feed(data)

    async def turns_while_fed(self, chunks: int) -> tuple[int, int]:
        """The turns of the loop the rest of the engine took while ``chunks`` more feeds
        were made, and the feeds made: (turns, feeds)."""
        turns, before = 0, self.feeds
        while self.feeds - before < chunks:
            await asyncio.sleep(0)
            turns += 1
        return turns, self.feeds - before
