"""Server-Sent Events for a card (SPEC §10.1, §3): numbered, resumable, bounded.

Each card that a client listens for gets one `CardFeed`: it takes the card's
events from `Engine.subscribe` (gated when taken) and keeps the last
`KEEP` of them numbered, so a client that reconnects with ``Last-Event-ID``
gets what it missed. Each connection only holds a cursor into that ring: a
client too slow to keep up never makes the server buffer more — when the
ring has moved past its cursor it is sent ``events.dropped`` with the count
it lost, and goes on from the oldest event still kept. Every event is
checked against consent again at the moment it is written to the client —
consent as the store holds it: an event written later than the turn that
took it (a client that pushed back, a resumption) is judged only once the
engine has caught up with the store in the turn that writes it, so that
another engine's revoke or removal holds from the moment it committed
(`CardFeed.judged`); a store that cannot be read ends the stream.

The feed takes each event in the turn of the loop that committed it (the
subscription calls it back), and a stream the server lets write straight to
its connection (`CardFeed.serve`) is written to right then: a tool call's
event reaches the card without waiting for a task to wake (issue 17).
Otherwise (`CardFeed.stream`) the reader's task is woken and yields it.

Sequence numbers are the feed's own: each feed numbers from a base drawn at
random among `_SLOTS` slots of `_SPAN` numbers (never one this process drew
before), not from the time it was made, which another feed of the card —
made again in the same millisecond, on a clock set back, after a restart or
by another server on the store — could share. An id the feed never gave
(one of another feed, or invented) is answered with ``events.dropped``
(count unknown) and then the live stream, never silently resumed.

One token holds at most `MAX_STREAMS` streams of a feed open at once
(`CardFeed.crowded`, asked before a stream is answered): each is a descriptor
and some 19 KiB of the server, so a card's code opening streams without end
would take every descriptor the server has.
"""

from __future__ import annotations

import asyncio
import functools
import json
import secrets
from collections import Counter, deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from engine.core.errors import StoreFailed
from engine.core.events import Event

if TYPE_CHECKING:
    from engine.engine import Engine
    from engine.service.auth import Standing
    from engine.services.subscriptions import Subscription

__all__ = ["BURST", "KEEP", "KEEP_BYTES", "MAX_STREAMS", "CardFeed", "Feeds", "Writer",
           "sse_frame"]

#: The most streams of one card one token holds open at once: a client needs one (two
#: for a moment while it reconnects); a few tabs or tools of a person's, a few more.
MAX_STREAMS = 16

#: Events kept per card for ``Last-Event-ID`` resumption ...
KEEP = 1000
#: ... and at most this many bytes of them (their data as JSON), the newest always
#: kept: an event may hold up to ``max_payload`` (a tool call's arguments, port data),
#: and an agent opening and cancelling tool calls needs no rate to send a card
#: 1,000 of 256 KiB (SPEC §8 "Bounds"). A client behind what is kept is told
#: ``events.dropped``, as one behind `KEEP` events is.
KEEP_BYTES = 4 * 1024 * 1024

#: Bytes a stream writes before it looks whether its client still keeps up: a
#: client that was behind is sent the backlog in pieces this big, each only once
#: the connection takes more (the transport's high-water mark is 64 KiB too), so
#: what the server holds for a slow client stays near that, plus one event —
#: not a copy of the ring (up to `KEEP` events of up to 256 KiB) per stream.
BURST = 64 * 1024

#: Numbers a feed may give (its slot, 268 million events): a feed that gave them all
#: ends, and its clients, reconnecting, are told ``events.dropped`` by the next one.
_SPAN = 2**28
#: Slots feeds draw their numbers from: every id stays below 2**53, an integer a
#: JavaScript client (most canvas apps) holds exactly if it keeps the id as a
#: number, and two feeds of other processes or runs share a slot once in 16 million.
_SLOTS = 2**24
#: The slots this process has drawn: never drawn again here.
_DRAWN: set[int] = set()


def _fresh_base() -> int:
    """The number before a new feed's first event: the start of a slot not drawn before.

    Once half the slots were drawn (8 million feeds made by one process) the ones
    remembered are forgotten, so a draw always ends soon and the memory they take
    stays bounded; slots then repeat only by chance, as across processes.
    """
    if len(_DRAWN) >= _SLOTS // 2:
        _DRAWN.clear()
    while True:
        slot = _SLOTS + secrets.randbelow(_SLOTS)
        if slot not in _DRAWN:
            _DRAWN.add(slot)
            return slot * _SPAN


#: Events whose data is JSON the engine checked (a tool call's arguments and result
#: pass `engine.core.manifest.check_json`: text keys, no NaN or infinity; the rest
#: is ids, states and codes): orjson writes them as ``json.dumps`` reads them back,
#: several times faster, on a tool call's critical path (issue 17).
_CHECKED_JSON = frozenset({"tool.call", "tool.resolved"})


def sse_frame(seq: int | None, type: str, data: dict[str, Any]) -> bytes:
    """One SSE message: ``id:`` the sequence number, ``event:`` the type, data ``{type, data}``."""
    head = f"id: {seq}\n" if seq is not None else ""
    message = {"type": type, "data": data}
    if type in _CHECKED_JSON:
        try:
            # One line as json's: orjson escapes every control character in a text.
            return b"".join((f"{head}event: {type}\ndata: ".encode(), orjson.dumps(message),
                             b"\n\n"))
        except orjson.JSONEncodeError:
            pass  # a lone surrogate, an integer past 64 bits: json's way
    body = json.dumps(message, default=str, separators=(",", ":"))
    return f"{head}event: {type}\ndata: {body}\n\n".encode()


class Writer(Protocol):
    """Where a direct stream's bytes go: the connection, written to at once.

    The server's short way out (`engine.service.protocol._Stream`): each `write`
    goes to the client in that turn of the loop, framed as the response's
    body needs.
    """

    def writable(self) -> bool:
        """Whether a write now reaches the client: it is there and not pushing back."""

    def gone(self) -> bool:
        """Whether the client went away (nothing written reaches it any more)."""

    def write(self, data: bytes) -> None:
        """Send ``data`` now."""

    async def drain(self) -> None:
        """Wait until the client takes writes again (back-pressure ended, or it went)."""


class _Reader:
    """A direct stream's place in a feed: what it was sent last, and when, and the
    token it was opened with (`Standing`; None: not watched)."""

    __slots__ = ("out", "cursor", "last", "poke", "standing")

    def __init__(self, out: Writer, cursor: int, now: float,
                 standing: Standing | None = None) -> None:
        self.out, self.cursor, self.last = out, cursor, now
        self.standing = standing
        #: Set when the reader's own task must look (a write failed in the commit's turn).
        self.poke: asyncio.Future[Any] | None = None


def _poke(reader: _Reader) -> None:
    """Wake a direct reader's task, if it waits, to look at its stream again."""
    if reader.poke is not None and not reader.poke.done():
        reader.poke.set_result(None)


def _size(event: Event) -> int:
    """Bytes of an event's data as JSON: what keeping it costs, near enough."""
    try:
        return len(orjson.dumps(event.data))
    except (orjson.JSONEncodeError, TypeError):
        return len(json.dumps(event.data, default=str))


class CardFeed:
    """One card's numbered events, the last `KEEP` kept, at most `KEEP_BYTES` of them."""

    def __init__(self, engine: Engine, card: str, *, keep: int = KEEP,
                 keep_bytes: int = KEEP_BYTES) -> None:
        self.card = card
        self._engine = engine
        #: The consent history's newest entry as the feed was made (then as `Feeds.get`
        #: last looked): a removal of its card, or another package given to it,
        #: recorded after it means it is another card now. Read before subscribing,
        #: so that a removal in between counts as after it, and a store that fails
        #: the read leaves no subscription behind.
        self.since = engine.history.newest()
        self.sub: Subscription = engine.subscribe(card, limit=keep)
        self.base = _fresh_base()
        self.seq = self.base  #: the newest event's number (base: none yet)
        self.ring: deque[tuple[int, Event]] = deque()
        #: The size of each event in ``ring`` (`_size`), in its order, and their sum.
        self._sizes: deque[int] = deque()
        self._bytes = 0
        self._keep, self._keep_bytes = keep, keep_bytes
        #: One future per reader waiting for the next event (or for the feed's end).
        self._waiting: list[asyncio.Future[Any]] = []
        #: The direct streams (`serve`): written to as each event is taken.
        self._readers: list[_Reader] = []
        #: Streams open, by the id of the token each was opened with (`crowded`).
        self._open: Counter[str] = Counter()
        self._loop = asyncio.get_running_loop()
        #: Done when the feed ends (closed, or its subscription ended).
        self.ended: asyncio.Future[None] = self._loop.create_future()
        #: True while the engine has caught up with the store in this turn of the loop.
        self._judged_now = False
        # Events are taken in the turn of the loop that committed them (the
        # subscription calls back), not by a task woken a turn or two later: a
        # tool call's event is on the agent's critical path (issue 17).
        self.sub.listen(self._take)

    @property
    def closed(self) -> bool:
        """Whether the feed has ended."""
        return self.ended.done()

    def _take(self) -> None:
        """The subscription has news: number its events, wake and write to the readers."""
        for event in self.sub.ready():
            if self.seq + 1 >= self.base + _SPAN:
                # Its numbers are spent: it ends (each client reconnects to a feed
                # of new numbers, and is told what it may have lost).
                self.sub.close()
                break
            self.seq += 1
            self._keep_event(event)
        if self.sub.closed and not self.ended.done():
            self.ended.set_result(None)
        self._wake()
        for reader in self._readers:
            try:
                self._push(reader)
            except Exception:  # noqa: BLE001 -- in the engine's commit: the reader's task
                # looks again by itself, and whatever failed fails there, ending only it.
                _poke(reader)

    def _keep_event(self, event: Event) -> None:
        """Keep the newest event, numbered ``seq``; the oldest go past `KEEP` or
        `KEEP_BYTES` (never the newest: the ring is never empty once an event came)."""
        ring, sizes = self.ring, self._sizes
        size = _size(event)
        ring.append((self.seq, event))
        sizes.append(size)
        self._bytes += size
        while len(ring) > 1 and (len(ring) > self._keep or self._bytes > self._keep_bytes):
            ring.popleft()
            self._bytes -= sizes.popleft()

    def _wake(self) -> None:
        waiting, self._waiting = self._waiting, []
        for fut in waiting:
            if not fut.done():
                fut.set_result(None)

    def close(self) -> None:
        """End the feed: its subscription; readers stop."""
        self.sub.close()  # calls _take, which ends the feed

    def judged(self) -> bool:
        """Whether events kept for later may be judged now: the engine has caught up
        with the store in this turn of the loop (once a turn, however many readers
        ask), and the feed goes on; False when the store cannot be read (the stream
        ends: no event goes out on consent nobody could read).

        Asked by a reader's own task before it writes what the feed kept. What the
        feed writes in the turn that took it needs no asking: the operation that
        committed it, the catch-up that told it, or the live output's own
        catch-up (`engine.services.subscriptions.EventHub`) read the store then.
        """
        if not self._judged_now:
            try:
                self._engine.catch_up()  # may end the feed (its card removed elsewhere)
            except StoreFailed:
                return False
            self._judged_now = True
            self._loop.call_soon(self._unjudged)
        return not self.closed

    def _unjudged(self) -> None:
        self._judged_now = False

    def allowed(self, event: Event) -> bool:
        """The gate at the moment of sending (SPEC §3)."""
        if event.type == "events.dropped":
            return True
        return self._engine.events.allows(self.sub, event)

    def _start(self, last_id: int | None) -> tuple[list[bytes], int]:
        """A new reader's first bytes and cursor: after ``last_id`` (None: from now)."""
        frames = [b": arrowgate events for card " + self.card.encode() + b"\n\n"]
        cursor = self.seq if last_id is None else last_id
        if cursor > self.seq or cursor < self.base:
            # An id this feed never gave (an earlier run of the server, or
            # invented): say that events may be lost, then go on from now.
            frames.append(sse_frame(None, "events.dropped", {"count": None,
                                                             "reason": "unknown-id"}))
            cursor = self.seq
        return frames, cursor

    def _push(self, reader: _Reader) -> None:
        """Write to a direct reader what it has not had, each event gated now, in one write."""
        out = reader.out
        if reader.cursor >= self.seq:
            return
        if reader.standing is not None and not reader.standing.stands():
            # Its token was revoked (here; or through another server, which this
            # server's next catch-up with the store names, setting ``revoked``; `stands`
            # asks the cache too once its last answer is `CACHE_SECONDS` old, and
            # then sets it): ``revoked`` wakes the reader's task to end the stream.
            return
        if not out.writable():
            # Pushing back: its task waits for the client to drain, then writes.
            _poke(reader)
            return
        frames = []
        size = 0
        first = self.ring[0][0]  # not empty: the reader is behind the newest event
        if reader.cursor < first - 1:
            frames.append(sse_frame(None, "events.dropped", {"count": first - 1 - reader.cursor}))
            reader.cursor = first - 1
        for i in range(reader.cursor - first + 1, len(self.ring)):
            seq, event = self.ring[i]
            reader.cursor = seq
            if self.allowed(event):
                frame = sse_frame(seq, event.type, event.data)
                frames.append(frame)
                size += len(frame)
                if size >= BURST:
                    out.write(b"".join(frames))
                    reader.last = self._loop.time()
                    frames, size = [], 0
                    if not out.writable():
                        # Pushing back now: the rest once it drains (its task waits).
                        _poke(reader)
                        return
        if frames:
            out.write(b"".join(frames))
            reader.last = self._loop.time()

    async def serve(self, out: Writer, last_id: int | None, *, heartbeat: float,
                    closing: asyncio.Event, gone: asyncio.Future[Any],
                    standing: Standing | None = None) -> None:
        """Write SSE to ``out`` from after ``last_id`` (None: from now) until ``closing``
        is set, the feed ends, the client goes (``gone`` done, or ``out.gone()``) or
        the token the stream was opened with no longer stands (``standing``: revoked
        here, at once; through another server on the store, as soon as this server
        catches up with the store, which it does before its next request's token
        check (`engine.service.auth.TokenStore.follow`), and in any case within
        `CACHE_SECONDS`: asked before each event once its last answer is that old,
        and while the stream is idle every `CACHE_SECONDS`, not only at a heartbeat).

        The same stream as `stream`, written directly: each event goes out in
        the turn of the loop that took it (the commit's), gated then; this task
        only wakes for heartbeats, back-pressure, the end and the failures of
        a write in the commit's turn. A client that pushes back is written to
        again once it drains, from its cursor: when the ring has moved past
        it, told ``events.dropped`` with the count, as `stream` does.
        """
        frames, cursor = self._start(last_id)
        out.write(b"".join(frames))
        reader = _Reader(out, cursor, self._loop.time(), standing)
        self._readers.append(reader)
        holder = self._opened(standing)
        closer: asyncio.Future[Any] = asyncio.ensure_future(closing.wait())
        drained: asyncio.Future[Any] | None = None
        revoked = standing.revoked if standing is not None else self._loop.create_future()
        try:
            while not (closing.is_set() or self.closed or gone.done() or out.gone()
                       or revoked.done()):
                # Busy or idle (events written in the commit's turn move
                # ``reader.last``, so the ping below may never come): `stands` asks
                # the token cache once its last answer is `CACHE_SECONDS` old.
                if standing is not None and not standing.stands():
                    break  # revoked through another server on the store
                if reader.cursor < self.seq and out.writable() and not self.judged():
                    break  # kept events, and consent cannot be read now (or the feed ended)
                self._push(reader)
                waits = {closer, gone, self.ended, revoked}
                if not out.writable():
                    if drained is None or drained.done():
                        drained = asyncio.ensure_future(out.drain())
                    waits.add(drained)
                now = self._loop.time()
                if reader.last + heartbeat <= now:
                    if out.writable():
                        out.write(b": ping\n\n")
                    reader.last = now
                    continue
                # Until the next ping is due, or the next question to the store.
                left = reader.last + heartbeat - now
                if standing is not None:
                    left = min(left, standing.fresh_for())
                reader.poke = self._loop.create_future()
                waits.add(reader.poke)
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                reader.poke = None
        finally:
            self._readers.remove(reader)
            self._closed(holder)
            closer.cancel()
            if drained is not None:
                drained.cancel()

    async def stream(self, last_id: int | None, *, heartbeat: float,
                     closing: asyncio.Event,
                     standing: Standing | None = None) -> AsyncIterator[bytes]:
        """SSE bytes from after ``last_id`` (None: from now) until ``closing`` is set
        or the token the stream was opened with no longer stands (for a server
        without the short way out: see `serve`)."""
        frames, cursor = self._start(last_id)
        for frame in frames:
            yield frame
        # One wait on the server's closing for the whole stream, and one bare future
        # per wait for the next event: no task made and cancelled for every event
        # (an event is on a tool call's critical path; issue 17).
        closer: asyncio.Future[Any] = asyncio.ensure_future(closing.wait())
        waker: asyncio.Future[Any] | None = None
        revoked = standing.revoked if standing is not None else self._loop.create_future()
        last = self._loop.time()  # when the client was last written to
        holder = self._opened(standing)
        try:
            while not (closing.is_set() or revoked.done()):
                if standing is not None and not standing.stands():
                    return  # revoked through another server on the store
                if self.ring and cursor < self.ring[0][0] - 1:
                    lost = self.ring[0][0] - 1 - cursor
                    yield sse_frame(None, "events.dropped", {"count": lost})
                    cursor = self.ring[0][0] - 1
                sent = False
                burst = 0
                # Index arithmetic instead of a scan: the ring holds consecutive numbers.
                while self.ring and cursor < self.seq:
                    start = self.ring[0][0]
                    if cursor < start - 1:
                        break  # the ring moved on while we were writing
                    seq, event = self.ring[cursor - start + 1]
                    cursor = seq
                    if standing is not None and not standing.stands():
                        # Revoked while the last event was being written, or through
                        # another server (asked once its last answer is stale).
                        return
                    if not self.judged():
                        return  # consent cannot be read now, or the feed ended
                    if self.allowed(event):
                        sent = True
                        frame = sse_frame(seq, event.type, event.data)
                        last = self._loop.time()
                        yield frame
                        burst += len(frame)
                        if burst >= BURST:
                            # A turn of the loop: what was yielded reaches the
                            # transport, which then pushes back on the next send
                            # if the client lags (else it all gathers unsent).
                            burst = 0
                            await asyncio.sleep(0)
                if sent or (self.ring and cursor < self.ring[0][0] - 1):
                    continue  # written meanwhile, or moved on: look again
                if self.closed:
                    return
                # Nothing was awaited since the ring was read to its end, so no event
                # can slip in between that and the waker's registration.
                waker = self._loop.create_future()
                self._waiting.append(waker)
                # Until the next ping is due, or the next question to the store.
                left = max(0.0, last + heartbeat - self._loop.time())
                if standing is not None:
                    left = min(left, standing.fresh_for())
                done, _pending = await asyncio.wait({waker, closer, revoked}, timeout=left,
                                                    return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    self._forget(waker)  # a quiet feed's list does not grow with pings
                    if standing is not None and not standing.stands():
                        return  # revoked through another server on the store
                    if self._loop.time() - last >= heartbeat:
                        last = self._loop.time()
                        yield b": ping\n\n"
        finally:
            self._closed(holder)
            closer.cancel()
            if waker is not None:
                self._forget(waker)  # the reader went away while it waited

    def crowded(self, token_id: str) -> bool:
        """Whether the token ``token_id`` holds `MAX_STREAMS` streams of this feed open:
        then it is refused another (the route's 429, ``too-many-streams``)."""
        return self._open[token_id] >= MAX_STREAMS

    def _opened(self, standing: Standing | None) -> str | None:
        """A stream opened with ``standing``'s token is counted (`crowded`); its id."""
        holder = standing.token_id if standing is not None else None
        if holder is not None:
            self._open[holder] += 1
        return holder

    def _closed(self, holder: str | None) -> None:
        """A stream `_opened` counted has ended."""
        if holder is not None:
            self._open[holder] -= 1
            if self._open[holder] <= 0:
                del self._open[holder]

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
        if feed is not None and not feed.closed:
            history = self._engine.history
            upto = history.newest()  # first: what is recorded after it is read next time
            if card in history.replaced_nodes(feed.since):
                # Not the card it was made for: removed (by this server, `drop` ended
                # it at once; by another process, or the Python API, only the history
                # says so) and its id given to a card since, or made another
                # package's card. Its events are not the new card's.
                self.drop(card)
                feed = None
            else:
                # Each look reads only what was recorded since the last: a card's
                # token cannot make every stream's opening read more and more
                # (each refused removal it asks for is an entry too).
                feed.since = upto
        if feed is None or feed.closed:
            # KEEP read now, not at import: a test may make it small.
            feed = self._feeds[card] = CardFeed(self._engine, card, keep=KEEP)
            # An ended feed leaves the map: its card removed by another process
            # (the engine ends the subscription as it catches up) is never asked
            # for again, and would otherwise stay, ring and all.
            feed.ended.add_done_callback(functools.partial(self._ended, feed))
        return feed

    def _ended(self, feed: CardFeed, _end: asyncio.Future[None]) -> None:
        """``feed`` ended: it leaves the map, unless a newer feed of its card took its place."""
        if self._feeds.get(feed.card) is feed:
            del self._feeds[feed.card]

    def drop(self, card: str) -> None:
        """The card was removed: end its feed, so that a card given its id later starts
        a feed of its own (never replaying this one's events to that card's token)."""
        feed = self._feeds.pop(card, None)
        if feed is not None:
            feed.close()

    def close(self) -> None:
        """Close every feed."""
        for feed in self._feeds.values():
            feed.close()
        self._feeds.clear()
