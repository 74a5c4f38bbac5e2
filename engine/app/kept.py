"""Requests on kept HTTP/1.1 connections to one service (issue 17).

`arrowgate mcp` makes one request to the service for each tool call, on the
agent's critical path. httpcore's connection pool costs more than the request
it carries: each request is queued, assigned by a scan of every connection,
waited for on an event, and its response wrapped twice with locks and
shielded scopes (about 1.4 M machine instructions a request against about
0.9 M on a kept connection; BENCHMARKS.md, round 8). `KeptConnections`
keeps the connections itself: a request takes an idle one (the most recently
used) or opens one, and gives it back when its response has been read whole.

The HTTP is httpcore's all the same: each connection is httpcore's own
`httpcore.AsyncHTTP11Connection` (h11's framing, keep-alive, its state after
each response), and whether an idle connection may be reused is its own
``has_expired`` — the keep-alive expiry, and the check before every reuse that
the server has not closed it — so a request is never sent on a connection the
server closed, and never sent twice. A connection whose response was not read
to its end (an error, a cancellation) is closed, never reused.

`UnixConnections` keeps connections to the service's own Unix socket the
same way, with less in between (round 10): the request's bytes written here,
the response framed by httptools (llhttp, the parser uvicorn serves with)
rather than by h11 under httpcore's layers, about 0.15 ms of CPU less a
request.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import select
import socket
import time
from collections.abc import AsyncIterable

import httpcore
import httptools

from engine.app.onewrite import connect_unix

__all__ = ["BodyTooLarge", "KeptConnections", "ServerClosed", "UnixConnections"]


class BodyTooLarge(Exception):
    """A response's body was longer than the request allowed (the connection is closed)."""


class ServerClosed(httpcore.RemoteProtocolError):
    """The server closed the connection before its response was whole (it is stopping,
    say): no answer garbled, only none."""


class KeptConnections:
    """HTTP/1.1 requests to one origin, on connections kept between requests.

    Connections are opened with ``backend`` (an httpcore network backend): to
    the Unix socket ``uds`` when given, else to the origin's host and port,
    with TLS for ``https`` (as httpcore's own connections: its default context,
    HTTP/1.1 by ALPN). At most ``limit`` requests are in flight at once (as
    httpcore's pool's ``max_connections``); a request beyond waits for one of
    them. An idle connection is reused for ``keepalive`` seconds at most.
    """

    def __init__(self, origin: httpcore.Origin, backend: httpcore.AsyncNetworkBackend,
                 *, uds: str | None = None, keepalive: float, limit: int = 10) -> None:
        self._origin = origin
        self._backend, self._uds = backend, uds
        self._keepalive = keepalive
        default = {b"http": 80, b"https": 443}.get(origin.scheme)
        #: The Host header, as httpcore's pool writes it for this origin.
        self._host = origin.host if origin.port == default else \
            b"%b:%d" % (origin.host, origin.port)
        self._idle: list[httpcore.AsyncHTTP11Connection] = []
        self._open: set[httpcore.AsyncHTTP11Connection] = set()
        self._slots = asyncio.Semaphore(limit)
        self._closed = False

    async def request(self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]],
                      content: bytes, timeout: float, max_body: int) -> tuple[int, bytes]:
        """Send one request (``content`` as its body, with its length, as httpcore's
        pool sends bytes); the response's status and whole body.

        Raises httpcore's exceptions (`httpcore.TimeoutException` when no connection
        is free within ``timeout`` seconds, or when the request, from taking one to
        its response's last byte, takes longer than ``timeout`` in all: a server
        dribbling its answer is given up on too), `BodyTooLarge` for a body longer
        than ``max_body`` bytes, `RuntimeError` once closed.
        """
        if self._closed:
            raise RuntimeError("the connections are closed")
        head = [(b"Host", self._host), *headers, (b"Content-Length", b"%d" % len(content))]
        url = httpcore.URL(scheme=self._origin.scheme, host=self._origin.host,
                           port=self._origin.port, target=target)
        timeouts = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
        request = httpcore.Request(method, url, headers=head, content=content,
                                   extensions={"timeout": timeouts})
        slots = self._slots
        await _free_slot(slots, timeout)
        try:
            try:
                # httpcore bounds each step; this bounds them all together.
                async with asyncio.timeout(timeout):
                    return await self._exchange(request, timeout, max_body)
            except TimeoutError:
                raise httpcore.ReadTimeout("the response took too long") from None
        finally:
            slots.release()

    async def _exchange(self, request: httpcore.Request, timeout: float,
                        max_body: int) -> tuple[int, bytes]:
        """``request`` on a kept or new connection: its status and whole body."""
        connection = await self._take(timeout)
        try:
            response = await connection.handle_async_request(request)
            try:
                chunks: list[bytes] = []
                size = 0
                stream = response.stream
                assert isinstance(stream, AsyncIterable)
                async for chunk in stream:
                    size += len(chunk)
                    if size > max_body:
                        raise BodyTooLarge(f"the response is longer than {max_body} bytes")
                    chunks.append(chunk)
            finally:
                # Back to idle when read to its end, else closed (httpcore's own rule).
                await response.aclose()
        finally:
            await self._give_back(connection)
        return response.status, b"".join(chunks)

    async def _take(self, timeout: float) -> httpcore.AsyncHTTP11Connection:
        """An idle connection that may be reused (the most recent first), else a new one."""
        idle = self._idle
        while idle:
            connection = idle.pop()
            if connection.is_available() and not connection.has_expired():
                return connection
            # Expired, or closed by the server: never reused.
            self._open.discard(connection)
            await connection.aclose()
        stream = await self._connect(timeout)
        connection = httpcore.AsyncHTTP11Connection(self._origin, stream,
                                                    keepalive_expiry=self._keepalive)
        self._open.add(connection)
        return connection

    async def _connect(self, timeout: float) -> httpcore.AsyncNetworkStream:
        """A new connection, as httpcore's `httpcore.AsyncHTTPConnection` opens one
        (without its retries: the pool it replaces had none)."""
        origin = self._origin
        if self._uds is not None:
            stream = await self._backend.connect_unix_socket(self._uds, timeout)
        else:
            stream = await self._backend.connect_tcp(origin.host.decode("ascii"), origin.port,
                                                     timeout)
        if origin.scheme == b"https":
            context = httpcore.default_ssl_context()
            context.set_alpn_protocols(["http/1.1"])
            try:
                stream = await stream.start_tls(context, origin.host.decode("ascii"), timeout)
            except BaseException:
                await stream.aclose()
                raise
        return stream

    async def _give_back(self, connection: httpcore.AsyncHTTP11Connection) -> None:
        if connection.is_idle() and not self._closed:
            idle = self._idle
            idle.append(connection)
            # `_take` reuses the newest, so a burst's spare connections sink to
            # the bottom and are never looked at there: close them once expired
            # (the server closes its end after its keep-alive), as httpcore's
            # pool did at every request. With one connection kept, no check.
            # Taken out first, closed after: a close may wait (TLS, anyio's
            # checkpoint), and meanwhile other requests take from the list.
            spares = []
            while idle[0] is not connection and idle[0].has_expired():
                spares.append(idle.pop(0))
            for spare in spares:
                self._open.discard(spare)
                await spare.aclose()
            return
        # Closed by httpcore after a response not read to its end or the server's
        # "Connection: close" (or by `aclose`), or left halfway: never reused.
        self._open.discard(connection)
        if not connection.is_closed():
            await connection.aclose()

    async def aclose(self) -> None:
        """Close every connection; requests after this raise `RuntimeError`."""
        self._closed = True
        self._idle.clear()
        connections, self._open = self._open, set()
        for connection in connections:
            await connection.aclose()


class UnixConnections:
    """HTTP/1.1 requests to a service on a Unix socket, read by httptools (issue 17).

    What `KeptConnections` does, for the address `arrowgate mcp` uses nearly
    always (the service's own socket), without httpcore and h11 in between:
    h11 validates each header against regular expressions and steps a state
    machine per event, httpcore wraps each step in traces and cancel scopes —
    about 0.15 ms of CPU a request on this machine, on the tool call's critical
    path (BENCHMARKS.md, round 10). The response is framed by httptools'
    parser instead — llhttp, the C parser uvicorn serves with (pinned with it)
    — which is as strict: anything it refuses is an error that closes the
    connection (httpcore's `httpcore.RemoteProtocolError`, as httpcore raises
    for what h11 refuses), never a guess. On top of llhttp, only HTTP/1.0 and
    1.1 are taken, and a ``Transfer-Encoding`` other than plain ``chunked``
    (which h11 refuses), a status below 100, and a head, chunk lines and
    trailers of more than `MAX_HEAD` bytes (llhttp has no bound of its own)
    are errors too. Interim 1xx answers are skipped, as httpcore skips them (a
    101 is an error). The request is written here: a request line and header
    lines, each refused when it is not one line of visible characters (as h11
    refuses what would split a request), before anything is sent.

    Kept as `KeptConnections` keeps them: a request takes the most recently used
    idle connection or opens one, at most ``limit`` in flight (a request beyond
    waits up to its timeout: `httpcore.PoolTimeout`), and a connection is
    reused only when its response was read whole, neither side said
    ``Connection: close``, it was HTTP/1.1, it has been idle under
    ``keepalive`` seconds and its socket has nothing to read — the server has
    not closed it (httpcore's own check) — so a request is never sent on a
    connection the server closed, nor sent twice. Each request leaves in one
    write. Timeouts and errors are httpcore's exceptions, as from
    `KeptConnections`: the wait for a free slot at most ``timeout``, then the
    connection, the write and the whole response at most ``timeout`` together.
    """

    def __init__(self, path: str, host: bytes, *, keepalive: float, limit: int = 10) -> None:
        self._path, self._host = path, host
        self._keepalive = keepalive
        #: Idle connections, the most recently used last, each with when it expires.
        self._idle: list[tuple[socket.socket, float]] = []
        self._open: set[socket.socket] = set()
        self._slots = asyncio.Semaphore(limit)
        self._closed = False
        #: Header lines already found well formed (the same few on every request).
        self._checked: set[tuple[bytes, bytes]] = set()

    async def request(self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]],
                      content: bytes, timeout: float, max_body: int) -> tuple[int, bytes]:
        """As `KeptConnections.request`: one request, its status and whole body."""
        if self._closed:
            raise RuntimeError("the connections are closed")
        if not _TARGET.fullmatch(target) or not _TOKEN.fullmatch(method):
            raise httpcore.LocalProtocolError("a request line with spaces or controls")
        parts = [method, b" ", target, b" HTTP/1.1\r\nHost: ", self._host, b"\r\n"]
        checked = self._checked
        for header in headers:
            name, value = header
            if header not in checked:
                # What h11 refuses to write: a header that is not one line.
                if not _TOKEN.fullmatch(name) or not _VALUE.fullmatch(value):
                    raise httpcore.LocalProtocolError(f"an invalid header {name!r}")
                if len(checked) < 64:  # a client's own few: its token, the content type
                    checked.add(header)
            parts += (name, b": ", value, b"\r\n")
        parts += (b"Content-Length: %d\r\n\r\n" % len(content), content)
        data = b"".join(parts)
        slots = self._slots
        await _free_slot(slots, timeout)
        try:
            # One deadline for the connection, the write and every read: each step
            # bounded alone, a server dribbling its answer would never time out.
            deadline = asyncio.get_running_loop().time() + timeout
            sock = await self._take(timeout)
            kept = False
            try:
                status, body, kept = await _exchange(sock, data, method == b"HEAD",
                                                     deadline, max_body)
            finally:
                if kept and not self._closed:
                    now = time.monotonic()
                    idle = self._idle
                    idle.append((sock, now + self._keepalive))
                    # A burst's spare connections sink to the bottom (`_take` reuses
                    # the newest) and are closed there once expired, as
                    # `KeptConnections` closes them.
                    while idle[0][0] is not sock and idle[0][1] <= now:
                        spare = idle.pop(0)[0]
                        self._open.discard(spare)
                        spare.close()
                else:
                    # Not read to its end, an error, a cancellation or "close": never reused.
                    self._open.discard(sock)
                    sock.close()
        finally:
            slots.release()
        return status, body

    async def _take(self, timeout: float) -> socket.socket:
        """An idle connection that may be reused (the most recent first), else a new one."""
        idle, now = self._idle, time.monotonic()
        while idle:
            sock, expires = idle.pop()
            if now < expires and not _readable(sock):
                return sock
            # Expired, or closed by the server (or it sent what nobody asked for).
            self._open.discard(sock)
            sock.close()
        sock = await connect_unix(self._path, timeout)
        self._open.add(sock)
        return sock

    async def aclose(self) -> None:
        """Close every connection; requests after this raise `RuntimeError`.

        A request still in flight has its connection shut down, not closed: its
        read wakes at once (the connection ended), and the request closes the
        socket itself. Closed under it, the loop would never wake the read, and
        the descriptor could pass to a new socket while the loop still watched it.
        """
        self._closed = True
        idle = {sock for sock, _expires in self._idle}
        self._idle.clear()
        for sock in self._open:
            if sock in idle:
                sock.close()
            else:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        self._open = set()


async def _free_slot(slots: asyncio.Semaphore, timeout: float) -> None:
    """Take one of ``slots`` (requests in flight), waiting at most ``timeout`` for one:
    past it, httpcore's `httpcore.PoolTimeout`, as its pool raises. A free slot is
    taken without a timeout's scope (the usual case, on the critical path)."""
    if not slots.locked():
        await slots.acquire()
        return
    try:
        async with asyncio.timeout(timeout):
            await slots.acquire()
    except TimeoutError:
        raise httpcore.PoolTimeout("no connection was free in time") from None


def _readable(sock: socket.socket) -> bool:
    """True when an idle connection has something to read — the server closed it
    or sent what nobody asked for — so it must not carry another request.

    httpcore's own check before a reuse (``httpcore._utils.is_socket_readable``,
    private there): a poll that does not wait.
    """
    if sock.fileno() < 0:
        return True
    poll = select.poll()
    poll.register(sock, select.POLLIN)
    return bool(poll.poll(0))


#: The most a response's heads (interim ones included), its chunk lines beyond
#: `_CHUNK_LINE` a chunk, and its trailers may take, in all: httpcore lets h11
#: buffer up to 100 KiB of an incomplete head; llhttp itself sets no bound.
MAX_HEAD = 64 * 1024
#: What a chunk's size line and the CRLF after its data may take without an
#: extension (16 hex digits and two CRLFs, rounded up).
_CHUNK_LINE = 32
#: A method or a header name (RFC 9110's token).
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: A header value h11 writes: visible characters, spaces and tabs inside, on one line.
_VALUE = re.compile(rb"(?:[\x21-\x7e\x80-\xff](?:[ \t\x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?")
#: A request target: no spaces or controls.
_TARGET = re.compile(rb"[\x21-\x7e\x80-\xff]+")


class _Response:
    """One response as httptools' parser (llhttp, uvicorn's own) reports it.

    The parser frames the response; this keeps what its callbacks say. Interim
    1xx answers are messages of their own, skipped as httpcore skips them. A
    callback never raises (httptools would wrap the error): what it finds is
    kept here, and `_read` acts on it after each feed.
    """

    __slots__ = ("body", "chunks", "done", "extra", "head_only", "headed", "invalid",
                 "keep", "length", "max_body", "parser", "size", "status", "too_large",
                 "transfer", "version")

    def __init__(self, head_only: bool, max_body: int) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.head_only, self.max_body = head_only, max_body
        self.body: list[bytes] = []
        self.size = 0
        self.status = 0
        self.headed = False  #: the final response's head is read
        self.keep = False  #: it lets the connection carry another request
        self.done = False  #: the final response is read whole
        self.extra = False  #: bytes came after it, which nobody asked for
        self.too_large = False
        self.length = False  #: it has a Content-Length
        self.transfer: bytes | None = None  #: its Transfer-Encoding
        self.invalid = False  #: a status below 100, which h11 refuses
        self.version = ""  #: the final response's HTTP version
        self.chunks = 0  #: chunks begun

    def on_message_begin(self) -> None:
        if self.done:
            self.extra = True  # what follows is not this response's: never looked at
            return
        self.length, self.transfer = False, None

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.done:
            return
        name = name.lower()
        if name == b"content-length":
            self.length = True
        elif name == b"transfer-encoding":
            self.transfer = value

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if status < 100:
            self.invalid = True  # h11 refuses it; llhttp would frame it as an answer
        elif status >= 200 and not self.done:
            self.version = self.parser.get_http_version()
            self.status, self.headed = status, True
            # Asked here: once the message is complete the parser has moved on.
            self.keep = self.parser.should_keep_alive() and self.version == "1.1"
            if self.head_only:
                self.done = True  # a HEAD's answer has no body, whatever it declares

    def on_chunk_header(self) -> None:
        self.chunks += 1

    def on_body(self, data: bytes) -> None:
        if self.done or not self.headed:
            return
        self.size += len(data)
        if self.size > self.max_body:
            self.too_large = True
        elif not self.too_large:
            self.body.append(data)

    def on_message_complete(self) -> None:
        if self.headed:
            self.done = True


async def _exchange(sock: socket.socket, data: bytes, head_only: bool, deadline: float,
                    max_body: int) -> tuple[int, bytes, bool]:
    """Send one request (``data``, whole) and read its response by ``deadline`` (the
    loop's time): status, body, and whether the connection may carry another request."""
    loop = asyncio.get_running_loop()
    failed: httpcore.WriteError | None = None
    try:
        async with asyncio.timeout_at(deadline):
            await loop.sock_sendall(sock, data)
    except TimeoutError:
        raise httpcore.WriteTimeout("the write timed out") from None
    except OSError as exc:
        # The server may have answered and closed before reading the whole request
        # (a body over its limit): its answer is read, as httpcore reads it.
        failed = httpcore.WriteError(str(exc) or type(exc).__name__)
        failed.__cause__ = exc
    try:
        status, body, keep = await _read(loop, sock, head_only, deadline, max_body)
    except (httpcore.NetworkError, httpcore.RemoteProtocolError):
        if failed is not None:
            raise failed from None
        raise
    return status, body, keep and failed is None


async def _read(loop: asyncio.AbstractEventLoop, sock: socket.socket, head_only: bool,
                deadline: float, max_body: int) -> tuple[int, bytes, bool]:
    """Read a response by ``deadline`` (the loop's time): status, body, and whether the
    connection was left clean."""
    response = _Response(head_only, max_body)
    parser = response.parser
    read = 0  # bytes read, of which `response.size` were the body's
    while True:
        try:
            async with asyncio.timeout_at(deadline):
                data = await loop.sock_recv(sock, 65536)
        except TimeoutError:
            raise httpcore.ReadTimeout("the read timed out") from None
        except OSError as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc
        if not data:
            if response.headed and not response.done and not response.length \
                    and response.transfer is None:
                break  # no framing: the body ran to the end of the connection
            raise ServerClosed("the server closed the connection in the middle of its "
                               "response")
        try:
            parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            raise httpcore.RemoteProtocolError("the server switched protocols") from None
        except httptools.HttpParserError as exc:
            if not response.done:
                raise httpcore.RemoteProtocolError(f"not a response: {exc}") from None
            response.extra = True  # garbage after the response: the connection goes
        if response.invalid:
            raise httpcore.RemoteProtocolError("a status code below 100")
        if response.headed:
            if response.version not in ("1.1", "1.0"):
                raise httpcore.RemoteProtocolError("not an HTTP/1.1 response")
            transfer = response.transfer
            if transfer is not None and transfer.strip(b" \t").lower() != b"chunked":
                # llhttp reads "gzip, chunked" as chunked; h11 (and we) take plain
                # chunked alone.
                raise httpcore.RemoteProtocolError("a Transfer-Encoding other than chunked")
        if response.too_large:
            raise BodyTooLarge(f"the response is longer than {max_body} bytes")
        if response.done:
            break
        read += len(data)
        if read - response.size > MAX_HEAD + _CHUNK_LINE * response.chunks:
            # What is not body (heads, chunk lines, trailers) kept growing.
            raise httpcore.RemoteProtocolError(
                "the response's head, chunk lines or trailers are too long")
    # Whether the server sent more after it is asked before the connection's reuse
    # (`_readable`, in `_take`): once is enough.
    keep = response.done and not response.extra and response.keep
    return response.status, b"".join(response.body), keep
