"""httpcore's network, with each request sent in one write (issue 17).

httpcore writes a request's head and its body as two writes (and an empty
one for the end of a sized body). Over a local socket each write may wake
the service on its own: its event loop reads the head, goes back to waiting,
and is woken again for the body — a second wake-up of another process (and,
on a busy machine, a second chance of being put off the CPU) on every
request of a tool call's critical path. `OneWriteBackend` is httpcore's own
network backend with its streams holding what is written until the next
read, which is when httpcore has written the whole request and waits for
the answer: the request leaves in one write. The HTTP framing, keep-alive
and the checks before reusing a connection stay httpcore's. A Unix socket
(the service's own, the usual way) is read and written with asyncio's socket
calls rather than through anyio's streams (`_SocketStream`); TCP stays on
httpcore's anyio backend.

Used by `arrowgate mcp`'s `engine.app.mcp.ServiceClient` (and the card of
``bench/mcp.py``). Imported only by them, as httpcore is slow to import.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
from httpcore._utils import is_socket_readable  # the check httpcore's own backends make

__all__ = ["OneWriteBackend", "connect_unix"]


class _OneWriteStream(httpcore.AsyncNetworkStream):
    """A connection whose writes are sent together, before the next read."""

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self._stream = stream
        self._held: list[bytes] = []

    async def _send_held(self, timeout: float | None) -> None:
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            await self._stream.write(data, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Hold ``buffer`` until the next read (httpcore reads once the request is written)."""
        if buffer:
            self._held.append(buffer)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Send what is held, then read."""
        await self._send_held(timeout)
        return await self._stream.read(max_bytes, timeout)

    async def aclose(self) -> None:
        """Close the connection (what is held was never a whole request: dropped)."""
        self._held.clear()
        await self._stream.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        """TLS over this connection (what is held goes first, in the clear, as it would)."""
        await self._send_held(timeout)
        return _OneWriteStream(await self._stream.start_tls(ssl_context, server_hostname,
                                                            timeout))

    def get_extra_info(self, info: str) -> Any:
        """As the connection underneath (httpcore asks whether the socket is readable)."""
        return self._stream.get_extra_info(info)


class _SocketStream(httpcore.AsyncNetworkStream):
    """A Unix-socket connection on asyncio's own socket calls, each request sent in one write.

    httpcore's anyio streams wrap every read and write in a cancel scope and a
    lookup of the running library; asyncio's ``sock_recv`` and ``sock_sendall``
    on a non-blocking socket do the same work in fewer steps (about 0.08 ms of
    CPU less a request; BENCHMARKS.md, round 5). Errors and timeouts are
    httpcore's own exceptions, as its backends raise them; whether the server
    closed the connection is asked as httpcore's own synchronous backend asks.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._loop = asyncio.get_running_loop()
        self._held: list[bytes] = []

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Hold ``buffer`` until the next read (httpcore reads once the request is written)."""
        if buffer:
            self._held.append(buffer)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Send what is held, then read."""
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._loop.sock_sendall(self._sock, data)
            except TimeoutError:
                raise httpcore.WriteTimeout("the write timed out") from None
            except OSError as exc:
                raise httpcore.WriteError(str(exc) or type(exc).__name__) from exc
        try:
            async with asyncio.timeout(timeout):
                return await self._loop.sock_recv(self._sock, max_bytes)
        except TimeoutError:
            raise httpcore.ReadTimeout("the read timed out") from None
        except OSError as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        """Close the connection (what is held was never a whole request: dropped)."""
        self._held.clear()
        self._sock.close()

    def get_extra_info(self, info: str) -> Any:
        """The socket, and whether it is readable (httpcore asks before reusing it)."""
        if info == "is_readable":
            return is_socket_readable(self._sock)
        if info == "socket":
            return self._sock
        return None


class OneWriteBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend (its anyio one for TCP, asyncio's socket calls for a Unix
    socket), its connections sending each request at once."""

    def __init__(self) -> None:
        # httpcore's own backend on anyio (what it picks itself under asyncio).
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None,
                          ) -> httpcore.AsyncNetworkStream:
        """A TCP connection."""
        return _OneWriteStream(await self._backend.connect_tcp(
            host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        """A Unix socket connection (on asyncio's socket calls: `_SocketStream`)."""
        return _SocketStream(await connect_unix(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        """As httpcore's own backend."""
        await self._backend.sleep(seconds)


async def connect_unix(path: str, timeout: float | None,
                       socket_options: Iterable[Any] | None = None) -> socket.socket:
    """A non-blocking socket connected to the Unix socket ``path`` on the running loop.

    Raises httpcore's `httpcore.ConnectTimeout` or `httpcore.ConnectError`,
    as its own backends do; the socket is closed on any failure.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        for option in socket_options or ():
            sock.setsockopt(*option)
        async with asyncio.timeout(timeout):
            await asyncio.get_running_loop().sock_connect(sock, path)
    except TimeoutError:
        sock.close()
        raise httpcore.ConnectTimeout(f"connecting to {path} timed out") from None
    except OSError as exc:
        sock.close()
        raise httpcore.ConnectError(str(exc) or type(exc).__name__) from exc
    except BaseException:
        sock.close()
        raise
    return sock
