"""Server-Sent Events for a card (SPEC §10.1, §3): numbered, resumable, bounded.

Each card that a client listens for gets one `CardFeed`: it takes the card's
events from `Engine.subscribe` (gated when taken) and keeps the last
`KEEP` of them numbered, so a client that reconnects with ``Last-Event-ID``
gets what it missed. Each connection only holds a cursor into that ring: a
client too slow to keep up never makes the server buffer more — when the
ring has moved past its cursor it is sent ``events.dropped`` with the count
it lost, and goes on from the oldest event still kept. Every event is
checked against consent again at the moment it is written to the client.

Sequence numbers start, per feed, from the time the feed was made (in
milliseconds, times 1000), so an id from an earlier run of the server is
always older than anything kept now and is answered with
``events.dropped`` (count unknown) rather than silently.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from engine.core.events import Event

if TYPE_CHECKING:
    from engine.engine import Engine
    from engine.services.subscriptions import Subscription

__all__ = ["KEEP", "CardFeed", "Feeds", "sse_frame"]

#: Events kept per card for ``Last-Event-ID`` resumption.
KEEP = 1000


def sse_frame(seq: int | None, type: str, data: dict[str, Any]) -> bytes:
    """One SSE message: ``id:`` the sequence number, ``event:`` the type, data ``{type, data}``."""
    body = json.dumps({"type": type, "data": data}, default=str, separators=(",", ":"))
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}event: {type}\ndata: {body}\n\n".encode()


class CardFeed:
    """One card's numbered events, the last `KEEP` kept."""

    def __init__(self, engine: Engine, card: str, *, keep: int = KEEP) -> None:
        self.card = card
        self._engine = engine
        self.sub: Subscription = engine.subscribe(card, limit=keep)
        self.base = int(time.time() * 1000) * 1000
        self.seq = self.base  #: the newest event's number (base: none yet)
        self.ring: deque[tuple[int, Event]] = deque(maxlen=keep)
        #: One future per reader waiting for the next event (or for the feed's end).
        self._waiting: list[asyncio.Future[Any]] = []
        self._closed = False
        self.task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        async for event in self.sub:
            self.seq += 1
            self.ring.append((self.seq, event))
            self._wake()

    def _wake(self) -> None:
        waiting, self._waiting = self._waiting, []
        for fut in waiting:
            if not fut.done():
                fut.set_result(None)

    def close(self) -> None:
        """End the feed: its subscription and its task; readers stop."""
        self._closed = True
        self.sub.close()
        self.task.cancel()
        self._wake()

    def allowed(self, event: Event) -> bool:
        """The gate at the moment of sending (SPEC §3)."""
        if event.type == "events.dropped":
            return True
        return self._engine.events.allows(self.sub, event)

    async def stream(self, last_id: int | None, *, heartbeat: float,
                     closing: asyncio.Event) -> AsyncIterator[bytes]:
        """SSE bytes from after ``last_id`` (None: from now) until ``closing`` is set."""
        yield b": arrowgate events for card " + self.card.encode() + b"\n\n"
        cursor = self.seq if last_id is None else last_id
        if cursor > self.seq or cursor < self.base:
            # An id this feed never gave (an earlier run of the server, or
            # invented): say that events may be lost, then go on from now.
            yield sse_frame(None, "events.dropped", {"count": None, "reason": "unknown-id"})
            cursor = self.seq
        # One wait on the server's closing for the whole stream, and one bare future
        # per wait for the next event: no task made and cancelled for every event
        # (an event is on a tool call's critical path; issue 17).
        closer: asyncio.Future[Any] = asyncio.ensure_future(closing.wait())
        waker: asyncio.Future[Any] | None = None
        try:
            while not closing.is_set():
                if self.ring and cursor < self.ring[0][0] - 1:
                    lost = self.ring[0][0] - 1 - cursor
                    yield sse_frame(None, "events.dropped", {"count": lost})
                    cursor = self.ring[0][0] - 1
                sent = False
                # Index arithmetic instead of a scan: the ring holds consecutive numbers.
                while self.ring and cursor < self.seq:
                    start = self.ring[0][0]
                    if cursor < start - 1:
                        break  # the ring moved on while we were writing
                    seq, event = self.ring[cursor - start + 1]
                    cursor = seq
                    if self.allowed(event):
                        sent = True
                        yield sse_frame(seq, event.type, event.data)
                if sent or (self.ring and cursor < self.ring[0][0] - 1):
                    continue  # written meanwhile, or moved on: look again
                if self._closed or self.task.done():
                    return
                # Nothing was awaited since the ring was read to its end, so no event
                # can slip in between that and the waker's registration.
                waker = asyncio.get_running_loop().create_future()
                self._waiting.append(waker)
                done, _pending = await asyncio.wait({waker, closer}, timeout=heartbeat,
                                                    return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    self._forget(waker)  # a quiet feed's list does not grow with pings
                    yield b": ping\n\n"
        finally:
            closer.cancel()
            if waker is not None:
                self._forget(waker)  # the reader went away while it waited

    def _forget(self, waker: asyncio.Future[Any]) -> None:
        """A waiting reader's future that no event has ended: cancelled and dropped."""
        if not waker.done():
            waker.cancel()
            if waker in self._waiting:
                self._waiting.remove(waker)


class Feeds:
    """The service's card feeds, made on first use and closed with the service."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._feeds: dict[str, CardFeed] = {}

    def get(self, card: str) -> CardFeed:
        """The card's feed (made now if needed).

        Raises:
            InvalidRequest: ``CARD_UNKNOWN`` when no custom card has that id.
        """
        feed = self._feeds.get(card)
        if feed is None or feed.task.done():
            # KEEP read now, not at import: a test may make it small.
            feed = self._feeds[card] = CardFeed(self._engine, card, keep=KEEP)
        return feed

    def close(self) -> None:
        """Close every feed."""
        for feed in self._feeds.values():
            feed.close()
        self._feeds.clear()
