"""One request of `arrowgate mcp` to the service takes at most `REQUEST_TIMEOUT` seconds
in all, however the service dribbles its answer: the agent gets an error in bounded time
(SPEC §10.2: a tool call never hangs on a broken service).

Found in round 20: the timeout bounded each read, not the request, so a service that
sent one byte of its answer every few seconds held the agent's tool call for ever.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from engine.app import mcp
from engine.app.mcp import ServiceClient, ServiceError
from tests.service.scripted import UnixServer

#: An answer of about 2 kB: sent a byte every 50 ms, it takes 100 s.
_ANSWER = b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2000\r\n\r\n' \
    + b' ' * 1998 + b'{}'


class _Dribbler(UnixServer):
    """Reads a request's head, then sends its answer one byte every ``every`` seconds."""

    def __init__(self, path: Path, every: float) -> None:
        super().__init__(path)
        self.every = every

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            for i in range(len(_ANSWER)):
                writer.write(_ANSWER[i:i + 1])
                await writer.drain()
                await asyncio.sleep(self.every)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def test_a_dribbling_service_is_given_up_on_in_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT", 0.5)
    async with _Dribbler(tmp_path / "s", every=0.05) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        began = time.monotonic()
        with pytest.raises(ServiceError, match="did not answer"):
            await asyncio.wait_for(client.get("/v1/tool-calls/x"), 5)
        assert time.monotonic() - began < 2.0
        await client.aclose()


async def test_over_tcp_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT", 0.5)

    async def dribble(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            for i in range(len(_ANSWER)):
                writer.write(_ANSWER[i:i + 1])
                await writer.drain()
                await asyncio.sleep(0.05)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(dribble, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        client = ServiceClient(f"http://127.0.0.1:{port}", "t", "a1")
        began = time.monotonic()
        with pytest.raises(ServiceError, match="did not answer"):
            await asyncio.wait_for(client.get("/v1/tool-calls/x"), 5)
        assert time.monotonic() - began < 2.0
        await client.aclose()
    finally:
        server.close()
        await server.wait_closed()
