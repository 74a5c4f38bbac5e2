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
and the checks before reusing a connection stay httpcore's.

Used by `arrowgate mcp`'s `engine.app.mcp.ServiceClient` (and the card of
``bench/mcp.py``). Imported only by them, as httpcore is slow to import.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from typing import Any

import httpcore

__all__ = ["OneWriteBackend"]


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


class OneWriteBackend(httpcore.AsyncNetworkBackend):
    """httpcore's default network backend, its connections sending each request at once."""

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
        """A Unix socket connection."""
        return _OneWriteStream(await self._backend.connect_unix_socket(
            path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        """As httpcore's own backend."""
        await self._backend.sleep(seconds)
