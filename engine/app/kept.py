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
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable

import httpcore

__all__ = ["BodyTooLarge", "KeptConnections"]


class BodyTooLarge(Exception):
    """A response's body was longer than the request allowed (the connection is closed)."""


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

        Raises httpcore's exceptions (`httpcore.TimeoutException` when a step takes
        longer than ``timeout`` seconds), `BodyTooLarge` for a body longer than
        ``max_body`` bytes, `RuntimeError` once closed.
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
        if slots.locked():
            try:
                async with asyncio.timeout(timeout):
                    await slots.acquire()
            except TimeoutError:
                raise httpcore.PoolTimeout("no connection was free in time") from None
        else:
            await slots.acquire()
        try:
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
        finally:
            slots.release()
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
