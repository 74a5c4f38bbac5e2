"""A Unix socket server that answers each request with the next scripted bytes, for the
tests of `arrowgate mcp`'s HTTP clients (`engine.app.mcp`, `engine.app.kept`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Self


class UnixServer:
    """A test server on the Unix socket ``path``, for ``async with``: each connection is
    served by `_serve`, which subclasses write; the requests read and the connections
    made are counted in ``requests`` and ``connections``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests: list[bytes] = []
        self.connections = 0
        self.server: asyncio.AbstractServer | None = None

    async def __aenter__(self) -> Self:
        self.server = await asyncio.start_unix_server(self._serve, str(self.path))
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


class Scripted(UnixServer):
    """A server answering each request with the next scripted response bytes.

    ``close_after``: True closes the connection after every reply; a function
    closes it after the replies for which it is true.
    """

    def __init__(self, path: Path, replies: list[bytes], *,
                 close_after: bool | Callable[[bytes], bool] = False) -> None:
        super().__init__(path)
        self.replies, self.close_after = replies, close_after

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.replies:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                self.requests.append(head + await reader.readexactly(length))
                reply = self.replies.pop(0)
                writer.write(reply)
                await writer.drain()
                close = self.close_after
                if close is True or (callable(close) and close(reply)):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
