"""Kept HTTP/1.1 connections (`engine.app.kept`, issue 17): `arrowgate mcp`'s own keeping
of httpcore's connections in place of httpcore's pool.

Against a small server on a Unix socket that answers each request when the test lets
it: requests in flight at once each have their own connection and at most ``limit``
are in flight; an idle connection is reused; a response not read to its end (too
long, or its request cancelled) closes its connection, which is never reused; and
closing closes every connection.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpcore
import pytest

from engine.app.kept import BodyTooLarge, KeptConnections
from engine.app.onewrite import OneWriteBackend


class Server:
    """Answers ``{"n": k}`` to the k-th request, once `release` lets it (or at once)."""

    def __init__(self, path: Path, *, hold: bool = False, size: int = 0) -> None:
        self.path, self.size = path, size
        self.go = asyncio.Event()
        if not hold:
            self.go.set()
        self.requests: list[bytes] = []
        self.connections = 0
        self.ended = 0  #: connections the client closed
        self.server: asyncio.AbstractServer | None = None

    async def __aenter__(self) -> Server:
        self.server = await asyncio.start_unix_server(self._serve, str(self.path))
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests.append(head)
                n = len(self.requests)
                await self.go.wait()
                data = json.dumps({"n": n, "pad": "x" * self.size}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%b"
                             % (len(data), data))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.ended += 1
        finally:
            writer.close()


def _kept(server: Server, limit: int = 10, keepalive: float = 30.0) -> KeptConnections:
    return KeptConnections(httpcore.Origin(b"http", b"arrowgate", 80), OneWriteBackend(),
                           uds=str(server.path), keepalive=keepalive, limit=limit)


async def _get(kept: KeptConnections, max_body: int = 1 << 20) -> dict[str, object]:
    status, body = await kept.request(b"GET", b"/x", [], b"", 5.0, max_body)
    assert status == 200
    return dict(json.loads(body))


async def _until(check: object, what: str) -> None:
    for _ in range(500):
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError(what)


async def test_requests_at_once_have_their_own_connections_then_reuse_them(
        tmp_path: Path) -> None:
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server)
        first = [asyncio.ensure_future(_get(kept)) for _ in range(3)]
        await _until(lambda: len(server.requests) == 3, "three requests in flight")
        server.go.set()
        assert sorted(int(str(r["n"])) for r in await asyncio.gather(*first)) == [1, 2, 3]
        for n in (4, 5, 6):
            assert (await _get(kept))["n"] == n
        await kept.aclose()
        await _until(lambda: server.ended == 3, "every connection closed")
    assert server.connections == 3  # the later requests went on kept connections
    assert server.requests[0].startswith(b"GET /x HTTP/1.1\r\nHost: arrowgate\r\n")


async def test_at_most_limit_requests_are_in_flight(tmp_path: Path) -> None:
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server, limit=2)
        calls = [asyncio.ensure_future(_get(kept)) for _ in range(3)]
        await _until(lambda: len(server.requests) == 2, "two requests in flight")
        await asyncio.sleep(0.05)
        assert len(server.requests) == 2 and server.connections == 2  # the third waits
        server.go.set()
        await asyncio.gather(*calls)
        await kept.aclose()
    assert server.connections == 2 and len(server.requests) == 3


async def test_a_response_not_read_to_its_end_closes_its_connection(tmp_path: Path) -> None:
    async with Server(tmp_path / "s", size=1000) as server:
        kept = _kept(server)
        with pytest.raises(BodyTooLarge):
            await _get(kept, max_body=100)
        assert (await _get(kept))["n"] == 2
        await _until(lambda: server.ended == 1, "the first connection closed")
        assert server.connections == 2
        await kept.aclose()


async def test_a_cancelled_request_closes_its_connection(tmp_path: Path) -> None:
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server)
        call = asyncio.ensure_future(_get(kept))
        await _until(lambda: len(server.requests) == 1, "the request sent")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        server.go.set()
        # Its answer, coming later on that connection, is never read as another's.
        assert (await _get(kept))["n"] == 2
        assert server.connections == 2
        await kept.aclose()
        with pytest.raises(RuntimeError):
            await _get(kept)


async def test_spare_connections_are_closed_once_expired(tmp_path: Path) -> None:
    """A burst's spare connections, idle below the one in use, are closed once their
    keep-alive has passed, not kept open until the end."""
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server, keepalive=0.2)
        burst = [asyncio.ensure_future(_get(kept)) for _ in range(3)]
        await _until(lambda: len(server.requests) == 3, "three requests in flight")
        server.go.set()
        await asyncio.gather(*burst)
        for _ in range(5):  # one at a time: the newest connection stays fresh
            await _get(kept)
            await asyncio.sleep(0.1)
        await _until(lambda: server.ended == 2, "the two spares closed")
        assert server.connections == 3
        await kept.aclose()


async def test_waiting_for_a_free_connection_is_bounded_by_the_timeout(
        tmp_path: Path) -> None:
    """With every slot in use, a request waits at most its timeout (httpcore's PoolTimeout)."""
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server, limit=1)
        first = asyncio.ensure_future(_get(kept))
        await _until(lambda: len(server.requests) == 1, "the first request in flight")
        with pytest.raises(httpcore.PoolTimeout):
            await kept.request(b"GET", b"/x", [], b"", 0.05, 1 << 20)
        server.go.set()
        assert (await first)["n"] == 1
        assert len(server.requests) == 1  # the one that timed out was never sent
        await kept.aclose()


class _Spare:
    """A connection whose close waits a turn of the loop, as anyio's TCP stream does."""

    def __init__(self, expired: bool) -> None:
        self.expired, self.closed = expired, False

    def is_idle(self) -> bool:
        return True

    def is_available(self) -> bool:
        return not self.closed

    def has_expired(self) -> bool:
        return self.expired

    def is_closed(self) -> bool:
        return self.closed

    async def aclose(self) -> None:
        self.closed = True
        await asyncio.sleep(0)


async def test_closing_a_spare_lets_other_requests_take_connections_meanwhile() -> None:
    """While an expired spare is being closed, another request takes the connection just
    given back: the request giving it back still ends well."""
    kept = KeptConnections(httpcore.Origin(b"http", b"127.0.0.1", 80), OneWriteBackend(),
                           keepalive=5.0)
    old, mine = _Spare(expired=True), _Spare(expired=False)
    kept._idle.append(old)  # type: ignore[arg-type]
    kept._open |= {old, mine}  # type: ignore[arg-type]
    giving = asyncio.ensure_future(kept._give_back(mine))  # type: ignore[arg-type]
    await asyncio.sleep(0)  # closing `old` now
    assert await kept._take(1.0) is mine
    await giving
    assert old.closed and not mine.closed and old not in kept._open
