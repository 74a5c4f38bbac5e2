"""The HTTP protocol each connection is served with: uvicorn's httptools protocol, faster.

`http_protocol` makes the protocol class `engine.service.serve` hands uvicorn.
Each request's scope is given a `_Direct` (``scope["arrowgate.direct"]``, the
server's side of `engine.service.direct.Direct`): the fast lane answers through it
in one write, or streams its answer through a `_Stream`. A connection that a wait
watches is asked now and then whether its client is still there (`_hung_up`).
"""

from __future__ import annotations

import asyncio
import collections
import select
import urllib.parse
import weakref
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.flow_control import FlowControl

from engine.service.auth import TokenMemo, peer_of_socket
from engine.service.expected import Expected
from engine.service.framing import (
    CODING_FIELDS,
    VERSIONS,
    answer,
    host_ok,
    host_refusal,
    host_value_refusal,
    origin_form,
    refusal,
    version_refusal,
)
from engine.service.outbox import Coalescing, Outbox

__all__ = ["HANGUP_CHECK_SECONDS", "MAX_HEAD", "MIN_BODY_RATE", "SEND_TIMEOUT", "Take",
           "http_protocol"]


#: The most a request's head (request line and headers) may take: past it, 431.
#: (A request's head is kept whole until it is complete; h11 stops at 16 KiB,
#: Node at 16 KiB, nginx at 32 KiB: an arrowgate request needs a few hundred bytes.)
MAX_HEAD = 64 * 1024

#: The slowest a request's body may come, in bytes a second, once the time an idle
#: connection is kept has passed since its head ended: a body is given that time and
#: a second more for each `MIN_BODY_RATE` bytes of it that came, then its connection
#: is closed. A byte that merely restarted the idle clock kept a body trickled a byte
#: a second (slowloris) open for as long as it trickled: 97 days for 8 MiB. At this
#: rate a body of the 8 MiB a request may have is given over two hours.
MIN_BODY_RATE = 1024

#: How long the answers queued for a client may go unsent because it does not read
#: them (the transport pushing back) before its connection is dropped: its answers,
#: an event stream's frames. (A slow event-stream reader is sent ``events.dropped``;
#: one that reads nothing is closed.) `engine.service.serve` passes its own.
SEND_TIMEOUT = 60.0

#: How often a connection that a wait watches is looked at (`_check_hangup`), and,
#: while it is not read from, asked with a poll(2) whether its client is still there.
HANGUP_CHECK_SECONDS = 1.0

#: What the parser's own refusals say.
_TOO_LARGE = f"the request's head (request line and header fields) is over {MAX_HEAD:,} bytes"
_INVALID = ("the request cannot be read as HTTP (RFC 9112){}: its head is "
            "malformed, or where its body ends is ambiguous (Content-Length beside "
            "Transfer-Encoding, two lengths, a folded header field); nothing more is "
            "read on this connection")
_TRAILERS_TOO_LARGE = (f"the request's trailer fields (after its chunked body) are over "
                       f"{MAX_HEAD:,} bytes, as a head may not be")
#: What llhttp says of a ``Content-Length`` beside ``Transfer-Encoding``: in a head, and
#: also of one sent as a trailer field, which it refuses before `Protocol._trailer` sees it.
_LENGTH_WITH_CODING = "Content-Length can't be present with Transfer-Encoding"
_LENGTH_TRAILER = ("the request sends Content-Length as a trailer field (after its chunked "
                   "body): a field that says how a message is framed may not be a trailer "
                   "(RFC 9110 §6.5.1), and the body's end is already known; nothing more is "
                   "read on this connection")

#: The header fields `Protocol.on_header` looks at (one set lookup a field): how the
#: body is coded (`framing.refusal`), and ``Host``, counted and its value checked
#: (`framing.host_refusal`, `framing.host_ok`).
_FIELDS_READ = CODING_FIELDS | {b"host"}

#: The methods of requests that write nothing (`Expected.request`).
_READS = frozenset({"GET", "HEAD"})


def _malformed(exc: Exception) -> tuple[int, str, str]:
    """The answer to a request the parser refused with ``exc`` (not one of ours)."""
    import httptools

    if isinstance(exc, httptools.HttpParserCallbackError):
        return 400, "http", _INVALID.format("")  # a step of uvicorn's failed: nothing to name
    return 400, "http", _INVALID.format(f" (the parser says: {str(exc).lower()})")


_HANGUP = select.POLLHUP | select.POLLERR | getattr(select, "POLLRDHUP", 0)


def _hung_up(transport: asyncio.BaseTransport) -> bool:
    """Whether the client of ``transport`` closed its end (or the socket failed)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    poller = select.poll()
    poller.register(sock.fileno(), _HANGUP)
    return any(events & _HANGUP for _fd, events in poller.poll(0))


class _Direct:
    """One request's short way in and out, for the fast lane (``scope["arrowgate.direct"]``).

    Through ASGI, the lane's request costs two ``receive``/``send`` round trips
    through uvicorn's cycle (each a coroutine, the headers checked against
    regular expressions) and the coalescing of head and body into one write.
    The lane answers with headers it made itself, so it hands over the whole
    body at once: `respond` writes status line, headers and body in one write
    and completes the cycle as uvicorn's own ``send`` would. Whenever that is
    not plainly the same (the response begun, the client gone, writing paused
    for back-pressure, an access log to keep, the body not all read), it says
    no and the lane uses ASGI as before.
    """

    __slots__ = ("_protocol", "_cycle", "_outbox", "_expected")

    def __init__(self, protocol: Any, cycle: Any, outbox: Outbox | None,
                 expected: Expected | None = None) -> None:
        # The cycle holds the scope, which holds this: held weakly, so a request
        # leaves no reference cycle behind for the collector (the request's task
        # holds the cycle while it runs).
        self._protocol, self._cycle = protocol, weakref.ref(cycle)
        #: Where answers wait for the turn's others (None: written at once).
        self._outbox = outbox
        #: The server's count of writing requests in flight (`idle`).
        self._expected = expected

    def idle(self) -> None:
        """This request writes nothing more and only waits for something to happen
        (a tool call's answer): the group commit no longer counts it in flight, so a
        lone caller beside it is still committed at once (`Expected`)."""
        cycle = self._cycle()
        if cycle is None or self._expected is None:
            return
        scope = cycle.scope
        if scope.get("method") != "GET" and not scope.get("arrowgate.idle"):
            scope["arrowgate.idle"] = True
            self._expected.idle()

    @property
    def token_memo(self) -> TokenMemo:
        """The connection's memo of its ``Authorization`` header (`TokenStore.recall`)."""
        memo: TokenMemo = self._protocol.token_memo
        return memo

    def lost(self) -> asyncio.Future[None]:
        """Done when the connection is lost (the client went away), for a wait to end
        on; shared by the connection's requests, so not to be cancelled. Until
        `unwatch`, the connection is also watched while it is not read from."""
        lost: asyncio.Future[None] = self._protocol.lost()
        return lost

    def unwatch(self) -> None:
        """The wait that asked for `lost` has ended."""
        self._protocol.unwatch()

    def run(self, app: Any) -> None:
        """Answer through ASGI after all: ``app`` runs as the request's task, in
        uvicorn's cycle (a request the lane took without one: `FastLane.take`)."""
        cycle = self._cycle()
        if cycle is not None:
            self._protocol.run_task(cycle, app)

    def body(self) -> bytes | None:
        """The whole request body when it has all arrived, else None (use ``receive``)."""
        cycle = self._cycle()
        if cycle is None or cycle.more_body or cycle.disconnected or cycle.response_complete or \
                cycle.waiting_for_100_continue:
            return None
        body = bytes(cycle.body)
        cycle.body = bytearray()
        return body

    def respond(self, status: int, head: bytes, body: bytes) -> bool:
        """Send the answer: ``head`` is its header lines (each ending CRLF), ``body`` all of it.

        Returns False, having sent nothing, when ASGI's way must be used instead.
        """
        cycle, protocol = self._cycle(), self._protocol
        if cycle is None or cycle.response_started or cycle.disconnected or cycle.access_log or \
                protocol.flow.write_paused or protocol.transport.is_closing():
            return False
        parts = [protocol.status_lines[status]]
        for name, value in cycle.default_headers:  # the date header, as uvicorn sends it
            parts += (name, b": ", value, b"\r\n")
        parts.append(head)
        if cycle.expects and cycle.more_body:
            # Answered before its body came, which it was to ask for (`Cycle`): closed.
            cycle.keep_alive = False
        if not cycle.keep_alive:
            parts.append(b"connection: close\r\n")
        parts += (b"\r\n", body)
        cycle.response_started = cycle.response_complete = True
        cycle.waiting_for_100_continue = False
        if self._outbox is None or not cycle.keep_alive or not self._outbox.wanted():
            protocol._coalescing.write_now(b"".join(parts))
        else:
            protocol._coalescing.write_soon(b"".join(parts), self._outbox)
        cycle.message_event.set()
        if not cycle.keep_alive:
            protocol.transport.close()
        cycle.on_response()
        return True

    def stream(self, head: bytes) -> _Stream | None:
        """Begin a streamed 200 answer (chunked): its head sent now, ``head`` its header
        lines (each ending CRLF); the body is written through the `_Stream` returned.

        None, having sent nothing, when ASGI's way must be used (as `respond`).
        """
        cycle, protocol = self._cycle(), self._protocol
        if cycle is None or cycle.response_started or cycle.disconnected or cycle.access_log or \
                protocol.flow.write_paused or protocol.transport.is_closing():
            return None
        parts = [protocol.status_lines[200]]
        for name, value in cycle.default_headers:
            parts += (name, b": ", value, b"\r\n")
        parts += (head, b"transfer-encoding: chunked\r\n")
        if not cycle.keep_alive:
            parts.append(b"connection: close\r\n")
        parts.append(b"\r\n")
        cycle.response_started = True
        cycle.waiting_for_100_continue = False
        protocol._coalescing.write_now(b"".join(parts))
        return _Stream(protocol, cycle)


class _Stream:
    """A streamed answer's body, written straight to the connection (`_Direct.stream`).

    What uvicorn's ``send`` does for a chunked body, without a coroutine and a
    queue of messages per write: each `write` is one chunk, sent in this turn
    of the loop; `end` writes the last chunk and completes the cycle as
    uvicorn's ``send`` would. After the client is gone, writes are dropped,
    as uvicorn drops them.
    """

    __slots__ = ("_protocol", "_cycle")

    def __init__(self, protocol: Any, cycle: Any) -> None:
        self._protocol, self._cycle = protocol, cycle

    def gone(self) -> bool:
        """The client went away, or the connection is closing."""
        return bool(self._cycle.disconnected or self._protocol.transport.is_closing())

    def writable(self) -> bool:
        """A write now reaches the client: it is there and not pushing back."""
        return not (self._protocol.flow.write_paused or self.gone() or
                    self._cycle.response_complete)

    def write(self, data: bytes) -> None:
        """One chunk of the body, sent now (dropped when the client is gone)."""
        if data and not self.gone() and not self._cycle.response_complete:
            self._protocol._coalescing.write_now(b"%x\r\n%b\r\n" % (len(data), data))

    async def drain(self) -> None:
        """Wait until the client takes writes again (uvicorn ends the wait when it goes)."""
        await self._protocol.flow.drain()

    def end(self) -> None:
        """The body is complete: the last chunk, and the cycle completed."""
        cycle, protocol = self._cycle, self._protocol
        if cycle.response_complete or cycle.disconnected:
            return
        if not protocol.transport.is_closing():
            protocol._coalescing.write_now(b"0\r\n\r\n")
        cycle.response_complete = True
        cycle.message_event.set()
        if not cycle.keep_alive:
            protocol.transport.close()
        cycle.on_response()


class _QueueHeld(FlowControl):
    """uvicorn's flow control, but reading stays paused while requests already read wait
    in the connection's ``pipeline`` for the one being answered.

    uvicorn pauses reading when a request comes pipelined behind one not yet
    answered, and resumes it as each answer is complete and whenever a request's
    task asks for its body, however many requests are still queued: a client
    that sends without reading its answers had everything it sent read and
    queued, without bound (a parsed request holds kilobytes). Held here, the
    server reads on only once the queue is empty, so a connection holds at most
    one read of requests beyond the one being answered, and an answer that waits
    for its client to read (the transport's back-pressure) stops the reading too.
    No request in the queue waits for reading: each was read whole before the
    next began, and the newest, whose body may still be coming, reads on when it
    leaves the queue to be answered.
    """

    def __init__(self, transport: asyncio.Transport, queued: collections.deque[Any]) -> None:
        super().__init__(transport)
        self._queued = queued

    def resume_reading(self) -> None:
        if not self._queued:
            super().resume_reading()


#: Takes a request whose body has all arrived, without a task (`FastLane.take`): its
#: scope, its `_Direct` and its body; False when it must run as uvicorn runs it.
Take = Callable[[dict[str, Any], _Direct, bytearray], bool]


def _taken(take: Take, scope: dict[str, Any], direct: _Direct, body: bytearray) -> bool:
    """``take``'s answer; False (the request runs as any request) when it raised.

    Called inside llhttp's callback: an exception let out there becomes the
    parser's error, answered "400 Invalid HTTP request" with the connection
    closed and the real error lost. Declined instead, the request runs in its
    task, where the same error is the server's 500 with its traceback logged,
    as for a request the lane never took.
    """
    try:
        return take(scope, direct, body)
    except Exception:
        return False


def http_protocol(unix: bool, expected: Expected, outbox: Outbox,
                  take: Take | None = None, send_timeout: float = SEND_TIMEOUT) -> Any:
    """uvicorn's httptools protocol, writes coalesced; on a Unix socket, peers known.

    A card's call (``POST /v1/calls``) read whole in one read is offered to
    ``take`` before it becomes a task: taken, it costs no task (the lane
    decides a turn's calls together and answers each through `_Direct`);
    declined, or its body still coming, it runs as any request. Its task is
    made when its body is complete (or the read ends without it), not when its
    headers are: uvicorn makes it then, but it runs only at the next turn, after
    the rest of the read, so it starts as early as before.

    Three costs per request are cut: the fast lane answers through `_Direct`;
    the keep-alive timeout is one timer per idle spell, checked when it
    fires, rather than a timer made at every answer and cancelled at the next
    request (both a heap operation on the loop); and a request's task leaves
    the server's set of tasks as its coroutine ends rather than through a
    done callback (a second handle a request, run at the loop's next turn).

    A connection does not outlast a client that is gone in all but name: one whose
    answers stay unsent for ``send_timeout`` seconds (`Protocol.pause_writing`) is
    dropped, and one that sends nothing is timed as an idle one from the start.
    """
    import httptools
    from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT, service_unavailable
    from uvicorn.protocols.http.httptools_impl import (
        STATUS_LINE,
        HttpToolsProtocol,
        RequestResponseCycle,
    )

    class Cycle(RequestResponseCycle):
        """uvicorn's request-response cycle, but an answer that will close its connection
        says so (``Connection: close``, RFC 9112 §9.6).

        An answer begun before the request's body was asked for (``Expect:
        100-continue``: a 401, a 404, a 405 that needs no body) closes the
        connection once sent (`Protocol.on_response_complete`): the body may be
        coming after all, and would be read as the next request. uvicorn wrote
        its head as a kept connection's. (`_Direct.respond` says so itself.)
        """

        #: The request came with ``Expect: 100-continue`` (`Protocol._begin`).
        expects = False

        def send(self, message: Any) -> Any:
            # Not a coroutine of its own: uvicorn's, returned (no frame a message).
            if self.expects and self.more_body and not self.response_started:
                self.keep_alive = False
            return super().send(message)

    class Protocol(HttpToolsProtocol):
        _idle_since: float | None = None
        #: Done when the connection is lost (`lost`), once a wait has asked; and
        #: the timer of its next look at a connection not read from (`_check_hangup`).
        _lost: asyncio.Future[None] | None = None
        _hangup_check: asyncio.TimerHandle | None = None
        #: How many waits watch `lost` now (the timer runs only while some do).
        _watching = 0
        #: Whether each request read and not yet answered may write, oldest first
        #: (pipelined requests are answered in order).
        #: Each request read and not yet answered, in order: its scope when it may
        #: write (any method but GET), else None.
        _writes: collections.deque[dict[str, Any] | None]
        #: uvicorn's status lines, for `_Direct.respond` (imported once, here).
        status_lines = STATUS_LINE
        #: The call whose task waits for its body: (cycle, app), until the read ends.
        _waiting: tuple[Any, Any] | None = None
        #: The cycle of the call ``take`` took, until answered: nothing else holds it
        #: (`_Direct` holds it weakly, and no task runs it).
        _taken: Any = None
        #: A request has begun and is not all read (its head, then its body); and
        #: its head is not complete yet.
        _reading = _in_head = False
        #: Parts of requests begun (a head, then a body: `_still_reading` tells whether
        #: a read stayed within one), and body bytes read (`on_body`).
        _parts = _body_bytes = 0
        #: While a request is not all read: when its last bytes came, and when its
        #: head began (`_still_reading`, `_keep_alive_due`).
        _reading_since: float | None = None
        _head_since: float | None = None
        #: While a request's body is not all read: when its head ended, and the body
        #: bytes read by then (`_keep_alive_due`: `MIN_BODY_RATE`).
        _body_since: float | None = None
        _body_base = 0
        #: Bytes of the request's head, or of its chunks' framing and trailers, read
        #: in reads wholly within them; and the size of the read being parsed.
        _head_bytes = _read_size = 0
        #: A bad request's answer (status, the problem's reason, text), once the parser
        #: stopped at it, and its cycle if its head was read: answered when the requests
        #: before it are (`_fail`).
        _failed: tuple[int, str, str] | None = None
        _failed_cycle: Any = None
        #: The request's coding fields and unmet expectations (`framing.CODING_FIELDS`)
        #: while its head is read, None when it has none; and why its head refuses it (`framing.refusal`).
        _codings: list[tuple[bytes, bytes]] | None = None
        _refused: tuple[int, str, str] | None = None
        #: How many ``Host`` fields the request's head has, as it is read; and the
        #: bytes of the trailer fields after its chunked body (`_trailer`).
        _hosts = _trailer_bytes = 0
        #: The timer that drops the connection when what it sends stays unsent
        #: (`pause_writing`), while the transport pushes back; and the bytes the
        #: transport held unsent when it was set.
        _send_stall: asyncio.TimerHandle | None = None
        _unsent = 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            # On TCP the close lingers: an answer sent as the connection closes,
            # while its client still sends, is otherwise lost to the reset that
            # bytes reaching a closed socket draw (`engine.service.linger`). A
            # Unix socket loses nothing that way: closed at once, as ever.
            self._coalescing = coalescing = Coalescing(transport, asyncio.get_running_loop(),
                                                       lingering=not unix,
                                                       send_timeout=send_timeout)
            self._writes = collections.deque()
            self._waiting = self._taken = None  # instance attributes: read every request
            self._failed = self._failed_cycle = self._reading_since = self._head_since = None
            self._body_since = None
            self._codings = self._refused = None
            self._hosts = self._trailer_bytes = 0
            self._reading = self._in_head = False
            self._head_bytes = self._read_size = self._parts = self._body_bytes = 0
            #: The connection's token, as its last call found it (`TokenStore.recall`).
            self.token_memo = TokenMemo()
            self._peer = peer_of_socket(transport.get_extra_info("socket")) if unix else None
            super().connection_made(coalescing)  # type: ignore[arg-type]
            # Any HTTP/d.d is read, so that its version is ours to judge
            # (`on_headers_complete`): llhttp itself refuses all but 0.9, 1.0, 1.1 and
            # 2.0 as "Invalid HTTP version", HTTP/1.2 among them. The leniency is of
            # the version's value alone: ``HTTP/1.a`` and ``HTTP/10.1`` stay unread.
            self.parser.set_dangerous_leniencies(lenient_version=True)
            # Before any request's cycle is made: each cycle keeps the flow it is given.
            self.flow = _QueueHeld(coalescing, self.pipeline)  # type: ignore[arg-type]
            self._send_stall = None
            # Idle until its first request comes: a client that connects and sends
            # nothing is closed as an idle one is (uvicorn times a connection only
            # after its first answer, so such a client kept its descriptor for good).
            self._idle()

        def pause_writing(self) -> None:
            # The transport holds more than its high-water mark for a client that
            # is not reading. Writing (and, `_QueueHeld`, reading) waits; and should
            # nothing move for `send_timeout`, the connection is dropped: its
            # answers and its descriptor are no longer kept for a client that may
            # never read again. (Reading on resumes it: the timer goes.)
            self.flow.pause_writing()
            if self._send_stall is None:
                self._unsent = self.transport.get_write_buffer_size()
                self._send_stall = self.loop.call_later(send_timeout, self._send_stalled)

        def resume_writing(self) -> None:
            if self._send_stall is not None:
                self._send_stall.cancel()
                self._send_stall = None
            self.flow.resume_writing()

        def _send_stalled(self) -> None:
            self._send_stall = None
            if not self.flow.write_paused or self.transport is None:
                return
            unsent = self.transport.get_write_buffer_size()
            if unsent < self._unsent:
                # Its client reads, only slowly: a large answer takes its time to go
                # (the transport resumes only once it is nearly all sent). Timed afresh.
                self._unsent = unsent
                self._send_stall = self.loop.call_later(send_timeout, self._send_stalled)
                return
            # Aborted, not closed: a close waits for the buffer to be sent, which is
            # the very thing that does not happen.
            self.transport.abort()  # connection_lost, then: the waits end

        def lost(self) -> asyncio.Future[None]:
            """Done when the connection is lost; one more wait watches it until
            `unwatch` (`_Direct.lost`)."""
            # Made the first time a wait asks (most connections never do): no task
            # a wait to watch ``receive`` for the disconnect.
            if self._lost is None:
                self._lost = self.loop.create_future()
                if self.transport is None or self.transport.is_closing():
                    self._lost.set_result(None)
            self._watching += 1
            if self._hangup_check is None and not self._lost.done():
                self._hangup_check = self.loop.call_later(HANGUP_CHECK_SECONDS,
                                                          self._check_hangup)
            return self._lost

        def unwatch(self) -> None:
            """A wait that watched `lost` has ended."""
            self._watching -= 1

        def _check_hangup(self) -> None:
            # A request pipelined behind a wait pauses reading (uvicorn's back-
            # pressure), and a connection not read from never learns that its
            # client went: the wait would last its whole timeout. So while a wait
            # watches, a poll asks the socket itself now and then (POLLRDHUP: the
            # peer closed, even with bytes still unread); gone, the connection is
            # closed as a read of its end would have closed it (what is written
            # still goes out first, to a client that only shut its side).
            self._hangup_check = None
            if self._watching <= 0 or self.transport is None or self.transport.is_closing():
                return
            if self.flow.read_paused and _hung_up(self.transport):
                self.transport.close()  # connection_lost, then: the waits end
                return
            self._hangup_check = self.loop.call_later(HANGUP_CHECK_SECONDS,
                                                      self._check_hangup)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._lost is not None and not self._lost.done():
                self._lost.set_result(None)
            if self._send_stall is not None:
                self._send_stall.cancel()
                self._send_stall = None
            self._coalescing.lost()
            if self._hangup_check is not None:
                self._hangup_check.cancel()
                self._hangup_check = None
            expected.gone(self, sum(1 for scope in self._writes
                                    if scope is not None and not scope.get("arrowgate.idle")))
            self._writes.clear()
            self._idle_since = None
            if self.timeout_keep_alive_task is not None:
                self.timeout_keep_alive_task.cancel()
                self.timeout_keep_alive_task = None
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            # HttpToolsProtocol.data_received, written out (no second frame a read,
            # which every request would pay), then the call whose task waited for a
            # body that did not come in this read: it runs, ``receive`` waits for it.
            if self._failed is not None:
                return  # the parser stopped at a bad request: nothing after it is read
            self._unset_keepalive_if_required()
            parts, body = self._parts, self._body_bytes
            self._read_size = len(data)
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError as exc:
                if self._refused is not None:
                    self._fail(*self._refused)
                elif self._in_head and self._head_too_large():
                    self._fail(431, "head-too-large", _TOO_LARGE)
                elif not self._in_head and str(exc) == _LENGTH_WITH_CODING:
                    # Said of a trailer (the head's were read): named, not "malformed".
                    self._fail(400, "trailer", _LENGTH_TRAILER)
                else:
                    self.logger.warning("Invalid HTTP request received.")
                    self._fail(*_malformed(exc))
            except httptools.HttpParserUpgrade:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                else:
                    self._unsupported_upgrade_warning()
            else:
                if self._reading:
                    # A request not all read by this read (rare: most come whole).
                    self._still_reading(parts != self._parts, body != self._body_bytes,
                                        len(data))
                elif self._reading_since is not None:
                    self._reading_since = None
            finally:
                if self._waiting is not None:
                    waiting, self._waiting = self._waiting, None
                    if waiting[0].body:
                        waiting[0].message_event.set()  # what `on_body` left unsaid
                    self.run_task(*waiting)

        def on_message_begin(self) -> None:
            # HttpToolsProtocol.on_message_begin, written out (no second frame a
            # request), then: a request has begun, its head first.
            self.url = b""
            self.expect_100_continue = False
            self.headers = []
            self.scope = {  # type: ignore[typeddict-item]
                "type": "http",
                "asgi": {"version": self.asgi_version, "spec_version": "2.3"},
                "http_version": "1.1",
                "server": self.server,
                "client": self.client,
                "scheme": self.scheme,  # type: ignore[typeddict-item]
                "root_path": self.root_path,
                "headers": self.headers,
                "state": self.app_state.copy(),
            }
            self._reading = self._in_head = True
            self._parts += 1
            self._head_bytes = 0
            self._codings = None
            self._hosts = self._trailer_bytes = 0

        def on_header(self, name: bytes, value: bytes) -> None:
            # HttpToolsProtocol.on_header, but the fields that say how the body is
            # coded are kept aside, and ``Host`` fields counted, for
            # `on_headers_complete` (one set lookup a field).
            if not self._in_head:
                self._trailer(name, value)
                return
            name = name.lower()
            if name in _FIELDS_READ:
                if name == b"host":
                    self._hosts += 1
                    if not value.isalnum() and not host_ok(value):
                        # RFC 9112 §3.2: MUST 400. (A plain name, as most clients send,
                        # is valid without the expression.) The parser stops here, and
                        # `data_received` answers as `_refused` says.
                        self._refused = host_value_refusal(value)
                        raise ValueError(self._refused[2])
                elif name == b"expect" and value.lower() == b"100-continue":
                    # Met (the interim 100 when its body is asked for); any other
                    # expectation is kept for `framing.refusal` (417).
                    self.expect_100_continue = True
                elif self._codings is None:
                    self._codings = [(name, value)]
                else:
                    self._codings.append((name, value))
            self.headers.append((name, value))

        def _trailer(self, name: bytes, value: bytes) -> None:
            """A trailer field, after a chunked body (httptools hands it to `on_header`):
            dropped, but counted as a head's field is; past `MAX_HEAD`, 431.

            Dropped rather than refused: RFC 9110 §6.5.1 lets a recipient discard
            trailer fields, no route reads one, and a client that adds one (a
            checksum) is still answered. Never kept: uvicorn appended them to the
            request's headers, which the route reads only after the whole read, so
            an ``Authorization`` or ``Content-Type`` sent after the body stood in
            for the head's (RFC 9110 §6.5.1: trailers are not merged into the
            header section unless the field says so, and none that matters here
            does). A request's headers are its head's, once its head is complete.
            """
            self._trailer_bytes += len(name) + len(value) + 4
            if self._trailer_bytes > MAX_HEAD:
                # The parser stops here, and `data_received` answers as `_refused` says.
                self._refused = (431, "head-too-large", _TRAILERS_TOO_LARGE)
                raise ValueError(_TRAILERS_TOO_LARGE)

        def _still_reading(self, began: bool, body: bool, size: int) -> None:
            """A request is not all read after a read of ``size`` bytes: bound what of
            it is kept whole, and time it. ``began``: a part of it (its head, its
            body) began in this read; ``body``: body bytes came in it.

            Its head is kept whole until complete (httptools gathers each header
            before handing it on), and so are trailers after a chunked body. A read
            wholly within the head, or within the body but bringing no body (chunk
            framing, trailers), is counted; past `MAX_HEAD` the request is refused
            (431). A read in which the part began is not (its share of it is
            unknown; `on_headers_complete` counts the head exactly), and body bytes
            start the count again. A request that stops coming, or a head that does
            not end, is given as long as an idle connection (`_keep_alive_due`).
            """
            now = self.loop.time()
            if began:
                self._head_bytes = 0
                if self._in_head:
                    self._head_since = now
                else:  # its body began: timed from here, at `MIN_BODY_RATE`
                    self._body_since, self._body_base = now, self._body_bytes
            elif body:
                self._head_bytes = 0
            else:
                self._head_bytes += size
                if self._head_bytes > MAX_HEAD:
                    self._fail(431, "head-too-large", _TOO_LARGE)
                    return
            self._reading_since = now
            self._arm()

        def _head_too_large(self) -> bool:
            """Whether the request's head, as read so far, is past `MAX_HEAD`."""
            return len(self.url) + sum(len(n) + len(v) + 4 for n, v in self.headers) > MAX_HEAD

        def _fail(self, status: int, reason: str, msg: str) -> None:
            """A request the server will not read (bad, or too large): answer ``status``
            (a problem, its ``reason`` and ``msg``) and close, once every request read
            before it is answered (`_settle`).

            Answers go in order. A request read whole before it in the same read (a
            call, say) is being decided, and its answer would otherwise never be
            sent: the client would take this answer for its call's, which did happen.
            Nothing after the bad request is read.
            """
            # Its own cycle when its head was read (its body is what was bad).
            cycle = self.cycle if self._reading and not self._in_head and \
                self.cycle is not None and self.cycle.scope is self.scope else None
            self._reading = self._in_head = False
            self._reading_since = self._body_since = None
            self._failed, self._failed_cycle = (status, reason, msg), cycle
            if self._waiting is not None and self._waiting[0] is cycle:
                self._waiting = None  # a call waiting for this very body: never run
            self._settle()

        def _settle(self) -> bool:
            """After `_fail`: answer the bad request and close, if nothing read before it
            is owed an answer; True when done."""
            cycle = self._failed_cycle
            if cycle is not None and cycle.response_started:
                # Answered already, its body not needed (a 401, a health check), or its
                # answer begun (a stream): one answer a request, so the connection just ends.
                self.transport.close()
                return True
            if len(self._writes) > (cycle is not None):
                return False  # `on_response_complete` asks again
            assert self._failed is not None
            self._refuse(*self._failed)
            return True

        def _refuse(self, status: int, reason: str, msg: str) -> None:
            """Answer ``status`` (a problem: ``reason``, ``msg``) and close: nothing more
            is read."""
            self._failed = (status, reason, msg)
            self.transport.write(answer(self.status_lines[status],
                                        self.server_state.default_headers, status, reason, msg))
            self.transport.close()

        def on_body(self, body: bytes) -> None:
            # HttpToolsProtocol.on_body, written out, but the call whose task waits
            # for its body has nobody to wake: told when it runs, if it does.
            cycle = self.cycle
            self._body_bytes += len(body)  # body even when dropped: not framing (`_still_reading`)
            if cycle.response_complete or \
                    (self.parser.should_upgrade() and self._should_upgrade()):
                return
            cycle.body += body
            if len(cycle.body) > HIGH_WATER_LIMIT:
                self.flow.pause_reading()
            if self._waiting is None:
                cycle.message_event.set()

        def on_message_complete(self) -> None:
            # HttpToolsProtocol.on_message_complete, written out (as `data_received`),
            # then ``take`` is offered the call that waited for its body.
            self._reading = False
            cycle = self.cycle
            if (self.parser.should_upgrade() and self._should_upgrade()) or \
                    cycle.response_complete:
                if cycle.response_complete and not self._writes:
                    # Answered before its body was all read (a 401, a 413): now read,
                    # the connection is idle, and timed as any idle one.
                    self._idle()
                return
            cycle.more_body = False
            waiting = self._waiting
            if waiting is not None and waiting[0] is cycle:
                self._waiting = None
                direct = cycle.scope.get("arrowgate.direct")
                # Only this holds the cycle of a call taken until it is answered
                # (`on_response_complete` lets go).
                self._taken = cycle
                if take is not None and direct is not None and not (
                        cycle.disconnected or cycle.waiting_for_100_continue) and \
                        _taken(take, cycle.scope, direct, cycle.body):
                    return  # nobody waits for its body: no task reads it
                self._taken = None
                cycle.message_event.set()
                self.run_task(*waiting)
                return
            cycle.message_event.set()

        def _unset_keepalive_if_required(self) -> None:
            # Bytes arrived (or the connection is gone): not idle. The timer, if
            # armed, stays; when it fires it finds the connection busy.
            self._idle_since = None

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._parts += 1  # its body's part begins
            if (self._head_since is not None or self._head_bytes + self._read_size > MAX_HEAD) \
                    and self._head_too_large():
                # Read in several reads (the one it began in was not counted), or
                # in one large read: stop the parser (`data_received` answers
                # 431). (Counted whole only then: not for every request.)
                self._in_head = True
                raise ValueError("the request's head is too large")
            # RFC 9110 §2.5: a request of a higher minor version than the server's
            # (HTTP/1.2) is served as the highest it speaks, HTTP/1.1 (a 1.x client
            # understands it); any other major version, and 0.x, is 505. Asked of
            # every request (a string made): llhttp keeps HTTP/3.1 alive as it does
            # 1.1, so its keep-alive answer cannot stand for the version.
            version = self.parser.get_http_version()
            if version not in VERSIONS:
                if version[:2] != "1.":
                    self._refused = version_refusal(version)
                    raise ValueError(self._refused[2])
                version = "1.1"
            elif version == "1.0":
                # RFC 9110 §10.1.1: a 100-continue expectation in an HTTP/1.0 request
                # MUST be ignored (§15.2: no 1xx to an HTTP/1.0 client, which reads
                # none): its body is read as it comes, as a request's without it.
                self.expect_100_continue = False
            if self.url[:1] != b"/":
                # Not the origin-form (a path): the absolute-form is read as its path
                # and query (`framing.origin_form`), any other form refused.
                form = origin_form(self.url, self.parser.get_method().decode("ascii"))
                if isinstance(form, tuple):
                    self._refused = form
                    raise ValueError(form[2])
                self.url = form
            if self._hosts != 1:
                # None (allowed of HTTP/1.0 alone), or several: refused as `_codings` are.
                self._refused = host_refusal(self._hosts, version)
                if self._refused is not None:
                    raise ValueError(self._refused[2])
            if self._codings is not None:
                self._refused = refusal(self._codings)
                if self._refused is not None:
                    # Its body is not read as sent: the parser stops here, and
                    # `data_received` answers as `_refused` says.
                    raise ValueError(self._refused[2])
            self._head_since = None
            if self._peer is not None:
                # Before the request's task is made from this scope.
                self.scope["arrowgate.peer"] = self._peer  # type: ignore[typeddict-unknown-key]
            self._begin(version)
            if self.cycle is not None and self.cycle.scope is self.scope:
                self.scope["arrowgate.direct"] = _Direct(  # type: ignore[typeddict-unknown-key]
                    self, self.cycle, outbox, expected)
            # A HEAD is its GET's (`engine.service.methods`): a read, never a write,
            # or a HEAD of a long wait would hold the group commit's lone caller.
            writes = self.scope.get("method") not in _READS
            self._writes.append(self.scope if writes else None)  # type: ignore[arg-type]
            expected.request(self, writes)

        def _begin(self, version: str) -> None:
            """HttpToolsProtocol.on_headers_complete, written out, but the request's
            ``version`` is the one judged (`on_headers_complete`): uvicorn asked the
            parser again (a string made a request) and put HTTP/1.2's own in the scope."""
            self.scope["method"] = self.parser.get_method().decode("ascii")
            if version != "1.1":
                self.scope["http_version"] = version
            if self.parser.should_upgrade() and self._should_upgrade():
                return
            parsed_url = httptools.parse_url(self.url)
            raw_path = parsed_url.path
            path = raw_path.decode("ascii")
            if "%" in path:
                path = urllib.parse.unquote(path)
            self.scope["path"] = self.root_path + path
            self.scope["raw_path"] = self.root_path.encode("ascii") + raw_path
            self.scope["query_string"] = parsed_url.query or b""
            app = self.app
            if self.limit_concurrency is not None and (
                    len(self.connections) >= self.limit_concurrency or
                    len(self.tasks) >= self.limit_concurrency):
                app = service_unavailable
                self.logger.warning("Exceeded concurrency limit.")
            existing_cycle = self.cycle
            self.cycle = Cycle(
                scope=self.scope, transport=self.transport, flow=self.flow,
                logger=self.logger, access_logger=self.access_logger,
                access_log=self.access_log,
                default_headers=self.server_state.default_headers,
                message_event=asyncio.Event(),
                expect_100_continue=self.expect_100_continue,
                keep_alive=version != "1.0" and self.parser.should_keep_alive(),
                on_response=self.on_response_complete)
            if self.expect_100_continue:
                self.cycle.expects = True
            if existing_cycle is None or existing_cycle.response_complete:
                self._start_asgi_task(self.cycle, app)
            else:
                # Pipelined: queued behind the request being answered.
                self.flow.pause_reading()
                self.pipeline.appendleft((self.cycle, app))

        def on_response_complete(self) -> None:
            self._taken = None
            # The whole answer is written: send it now, not a turn later.
            self._coalescing.flush()
            # The request answered is the oldest in flight (answers leave in
            # order), not necessarily ``self.scope``: that is the newest read.
            scope = self._writes.popleft() if self._writes else None
            if scope is not None:
                expected.answered(self, expect=not scope.get("arrowgate.once"),
                                  counted=not scope.get("arrowgate.idle"))
            if self._failed is not None and self._settle():
                return  # the last request before a bad one was answered: the bad one's too
            cycle = self.cycle
            if self.expect_100_continue and cycle is not None and cycle.more_body and \
                    cycle.response_complete:
                # Answered (a 413, a 401) before its body was asked for: a client
                # that sent ``Expect: 100-continue`` then never sends it, and its
                # next request would be read as this one's body. Closed instead.
                self.transport.close()
                return
            # What HttpToolsProtocol.on_response_complete does, but the keep-alive
            # timer is armed only when none is.
            self.server_state.total_requests += 1
            if self.transport.is_closing():
                return
            if self.pipeline:
                cycle, app = self.pipeline.pop()
                # Read on only once it was the last queued (`_QueueHeld`).
                self.flow.resume_reading()
                self.run_task(cycle, app)  # not offered to ``take``: read already
                return
            self.flow.resume_reading()
            # `_idle` and `_arm`, written out: once for every request.
            self._idle_since = self.loop.time()
            if self.timeout_keep_alive_task is None:
                self.timeout_keep_alive_task = self.loop.call_later(
                    self.timeout_keep_alive, self._keep_alive_due)

        def _idle(self) -> None:
            """Nothing in flight: the connection is idle from now, closed after
            ``timeout_keep_alive`` unless a request comes (`_keep_alive_due`)."""
            self._idle_since = self.loop.time()
            self._arm()

        def _arm(self) -> None:
            """The keep-alive timer, unless armed: `_keep_alive_due` looks at the
            connection when it fires, and arms it again for what is left."""
            if self.timeout_keep_alive_task is None:
                self.timeout_keep_alive_task = self.loop.call_later(
                    self.timeout_keep_alive, self._keep_alive_due)

        def _start_asgi_task(self, cycle: Any, app: Any) -> None:
            # Called only as headers complete, in `data_received` (a pipelined
            # request is started by `on_response_complete`, through `run_task`).
            scope = cycle.scope
            if scope["method"] == "POST" and scope["path"] == "/v1/calls" and \
                    take is not None and app is self.app:
                # Its body may complete in this read: `take` is offered it then.
                self._waiting = (cycle, app)
                return
            # `run_task`, written out: no second frame for every other request.
            if getattr(self.config, "reset_contextvars", False):
                super()._start_asgi_task(cycle, app)
                return
            self.tasks.add(self.loop.create_task(self._run_asgi(cycle, app)))

        def run_task(self, cycle: Any, app: Any) -> None:
            """Run the request in a task of its own, as uvicorn does."""
            if getattr(self.config, "reset_contextvars", False):  # uvicorn's own way, then
                super()._start_asgi_task(cycle, app)
                return
            # uvicorn's, but the task leaves the server's set itself as it ends,
            # not through a done callback: no handle and no callback a request
            # for the loop's next turn. A task cancelled before its first step
            # never runs its `finally` and stays in the set: that happens only
            # when uvicorn cancels what is left past its graceful shutdown, after
            # which nothing reads the set (it would matter to uvicorn's
            # ``limit_concurrency``, which counts the set and which we never set).
            self.tasks.add(self.loop.create_task(self._run_asgi(cycle, app)))

        async def _run_asgi(self, cycle: Any, app: Any) -> None:
            try:
                await cycle.run_asgi(app)
            finally:
                # The loop named: asking for the running one costs a system call
                # (Python checks the process id, getpid(2)), a request.
                self.tasks.discard(asyncio.current_task(self.loop))

        def _keep_alive_due(self) -> None:
            self.timeout_keep_alive_task = None
            since = self._idle_since
            if since is None:
                since = self._reading_since
                if since is None:
                    return  # busy: armed again when its answer is complete
                # A request not all read: closed once no byte of it came for as
                # long as an idle connection is kept, or its head has taken that
                # long, or its body has come slower than `MIN_BODY_RATE` past
                # that long (whatever was read of it would otherwise be held for
                # good, and its connection too) — unless the server is what it
                # waits on: reading paused (a request queued behind another, a
                # body not yet taken) or a body not yet asked for (``Expect:
                # 100-continue``).
                now = self.loop.time()
                cycle = self.cycle
                left: float
                if self.flow.read_paused or (cycle is not None and cycle.more_body and
                                             cycle.waiting_for_100_continue):
                    self._reading_since = self._head_since = now
                    if self._body_since is not None:
                        self._body_since, self._body_base = now, self._body_bytes
                    left = self.timeout_keep_alive
                else:
                    left = since + self.timeout_keep_alive - now
                    if self._in_head:
                        if self._head_since is not None:
                            left = min(left, self._head_since + self.timeout_keep_alive - now)
                    elif self._body_since is not None:
                        given = (self._body_bytes - self._body_base) / MIN_BODY_RATE
                        left = min(left, self._body_since + self.timeout_keep_alive + given - now)
                if left > 0:
                    self.timeout_keep_alive_task = self.loop.call_later(left, self._keep_alive_due)
                else:
                    self._reading_since = self._body_since = None
                    self.transport.close()
                return
            left = since + self.timeout_keep_alive - self.loop.time()
            if left > 0:
                self.timeout_keep_alive_task = self.loop.call_later(left, self._keep_alive_due)
            else:
                self.timeout_keep_alive_handler()

    return Protocol
