"""Kept HTTP/1.1 connections (`engine.app.kept`, issue 17): `arrowgate mcp`'s own keeping
of httpcore's connections in place of httpcore's pool (`KeptConnections`), and of
connections to a Unix socket framed without httpcore (`UnixConnections`): each test
of keeping runs on both.

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

from engine.app.kept import BodyTooLarge, KeptConnections, UnixConnections
from engine.app.onewrite import OneWriteBackend
from tests.conftest import polls
from tests.service.scripted import Scripted, UnixServer


class Server(UnixServer):
    """Answers ``{"n": k}`` to the k-th request, once `release` lets it (or at once)."""

    def __init__(self, path: Path, *, hold: bool = False, size: int = 0) -> None:
        super().__init__(path)
        self.size = size
        self.go = asyncio.Event()
        if not hold:
            self.go.set()
        self.ended = 0  #: connections the client closed

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


Kept = KeptConnections | UnixConnections


@pytest.fixture(params=["httpcore", "unix"])
def kind(request: pytest.FixtureRequest) -> str:
    """Which connections a test keeps: httpcore's, or those framed here."""
    return str(request.param)


def _kept(server: Server, kind: str, limit: int = 10, keepalive: float = 30.0) -> Kept:
    if kind == "unix":
        return UnixConnections(str(server.path), b"arrowgate", keepalive=keepalive,
                               limit=limit)
    return KeptConnections(httpcore.Origin(b"http", b"arrowgate", 80), OneWriteBackend(),
                           uds=str(server.path), keepalive=keepalive, limit=limit)


async def _get(kept: Kept, max_body: int = 1 << 20) -> dict[str, object]:
    status, body = await kept.request(b"GET", b"/x", [], b"", 5.0, max_body)
    assert status == 200
    return dict(json.loads(body))


async def _until(check: object, what: str) -> None:
    for _ in polls():
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError(what)


async def test_requests_at_once_have_their_own_connections_then_reuse_them(
        tmp_path: Path, kind: str) -> None:
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server, kind)
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


async def test_at_most_limit_requests_are_in_flight(tmp_path: Path, kind: str) -> None:
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server, kind, limit=2)
        calls = [asyncio.ensure_future(_get(kept)) for _ in range(3)]
        await _until(lambda: len(server.requests) == 2, "two requests in flight")
        await asyncio.sleep(0.05)
        assert len(server.requests) == 2 and server.connections == 2  # the third waits
        server.go.set()
        await asyncio.gather(*calls)
        await kept.aclose()
    assert server.connections == 2 and len(server.requests) == 3


async def test_a_response_not_read_to_its_end_closes_its_connection(tmp_path: Path, kind: str) -> None:
    async with Server(tmp_path / "s", size=1000) as server:
        kept = _kept(server, kind)
        with pytest.raises(BodyTooLarge):
            await _get(kept, max_body=100)
        assert (await _get(kept))["n"] == 2
        await _until(lambda: server.ended == 1, "the first connection closed")
        assert server.connections == 2
        await kept.aclose()


async def test_a_cancelled_request_closes_its_connection(tmp_path: Path, kind: str) -> None:
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server, kind)
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


async def test_spare_connections_are_closed_once_expired(tmp_path: Path, kind: str) -> None:
    """A burst's spare connections, idle below the one in use, are closed once their
    keep-alive has passed, not kept open until the end."""
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server, kind, keepalive=0.2)
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
        tmp_path: Path, kind: str) -> None:
    """With every slot in use, a request waits at most its timeout (httpcore's PoolTimeout)."""
    async with Server(tmp_path / "s", hold=True) as server:
        kept = _kept(server, kind, limit=1)
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


def _replies(path: Path, replies: list[bytes]) -> Scripted:
    """A server answering each request with the next of ``replies``; a reply whose body
    runs to the end of the connection (``x-then: close``) closes it."""
    return Scripted(path, replies, close_after=lambda reply: reply.startswith(
        b"HTTP/1.1 200 OK\r\nx-then: close"))


def _unix(server: Scripted) -> UnixConnections:
    return UnixConnections(str(server.path), b"arrowgate", keepalive=30.0)


async def _ask(kept: UnixConnections) -> tuple[int, bytes]:
    return await kept.request(b"GET", b"/x", [], b"", 2.0, 1 << 20)


_OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


async def test_a_unix_request_is_written_as_httpcore_writes_it(tmp_path: Path) -> None:
    """The same request line, headers and body, byte for byte, in one write."""
    headers = [(b"Authorization", b"Bearer t"), (b"Content-Type", b"application/json")]
    body = b'{"text": "\xc3\xa9"}'
    async with _replies(tmp_path / "s", [_OK, _OK]) as server:
        ours = _unix(server)
        theirs = KeptConnections(httpcore.Origin(b"http", b"arrowgate", 80), OneWriteBackend(),
                                 uds=str(server.path), keepalive=30.0)
        for kept in (ours, theirs):
            assert await kept.request(b"POST", b"/v1/tool-calls?wait=0.5", headers, body,
                                      2.0, 100) == (200, b"ok")
            await kept.aclose()
    assert server.requests[0] == server.requests[1]
    assert server.requests[0].startswith(b"POST /v1/tool-calls?wait=0.5 HTTP/1.1\r\n"
                                         b"Host: arrowgate\r\n")
    async with _replies(tmp_path / "t", [_OK]) as server:
        kept = _unix(server)
        for bad in ([(b"X-A", b"1\r\nX-B: 2")], [(b"X A", b"1")]):
            with pytest.raises(httpcore.LocalProtocolError):
                await kept.request(b"GET", b"/x", bad, b"", 2.0, 100)
        with pytest.raises(httpcore.LocalProtocolError):
            await kept.request(b"GET", b"/x y", [], b"", 2.0, 100)
        assert server.requests == []  # nothing sent
        await kept.aclose()


async def test_a_unix_response_is_framed_strictly(tmp_path: Path) -> None:
    """Interim answers skipped; chunked (with extensions and trailers), sized and empty
    bodies read; a connection kept only when the response was plainly whole."""
    replies = [
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\nlink: x\r\n\r\n" + _OK,
        b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: Chunked\r\n\r\n"
        b"3;a=b\r\nabc\r\n2\r\nde\r\n0\r\nx-trailer: 1\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n",
        _OK,
    ]
    async with _replies(tmp_path / "s", replies) as server:
        kept = _unix(server)
        assert await _ask(kept) == (200, b"ok")
        assert await _ask(kept) == (404, b"abcde")
        assert await _ask(kept) == (204, b"")
        assert await _ask(kept) == (200, b"ok")
        await kept.aclose()
    assert server.connections == 1


@pytest.mark.parametrize("reply", [
    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok",
    # Stricter than h11, as llhttp is: a length given twice, a space after a chunk's size.
    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nContent-Length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2 \r\nok\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ncontent-length: +2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n folded\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\nbad header: 1\r\ncontent-length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n",
    b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
    b"HTTP/2 200\r\n\r\n",
    b"HTTP/1.1 099 x\r\ncontent-length: 2\r\n\r\nhi" + _OK,  # not an interim answer
    b"ICY 200 OK\r\n\r\n",
])
async def test_a_unix_response_it_does_not_plainly_take_is_an_error(
        tmp_path: Path, reply: bytes) -> None:
    """What h11 would refuse (or read another way) is a protocol error, and the connection
    is closed: the next request goes on a new one."""
    async with _replies(tmp_path / "s", [reply, _OK]) as server:
        kept = _unix(server)
        with pytest.raises(httpcore.RemoteProtocolError):
            await _ask(kept)
        assert await _ask(kept) == (200, b"ok")
        await kept.aclose()
    assert server.connections == 2


async def test_a_unix_connection_is_kept_only_when_its_response_ended_cleanly(
        tmp_path: Path) -> None:
    """Not kept: HTTP/1.0, ``Connection: close``, a body running to the end of the
    connection, bytes after the response that nobody asked for (never read as the next
    request's answer)."""
    replies = [
        b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\ncontent-length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nx-then: close\r\n\r\nto the end",
        _OK + b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nstale",
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfresh",
        _OK,
    ]
    async with _replies(tmp_path / "s", replies) as server:
        kept = _unix(server)
        assert await _ask(kept) == (200, b"ok")
        assert await _ask(kept) == (200, b"ok")
        assert await _ask(kept) == (200, b"to the end")
        assert await _ask(kept) == (200, b"ok")
        assert await _ask(kept) == (200, b"fresh")
        assert await _ask(kept) == (200, b"ok")
        await kept.aclose()
    assert server.connections == 5  # the last two on one connection


async def test_a_unix_response_cut_short_is_an_error(tmp_path: Path) -> None:
    """A server that closes in the middle of a response: an error, whatever was read."""
    for reply in (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nok",
                  b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n",
                  b"HTTP/1.1 200 OK\r\ncontent-le"):
        async with _replies(tmp_path / "s", [reply]) as server:
            kept = _unix(server)
            task = asyncio.ensure_future(_ask(kept))
            await _until(lambda: server.replies == [], "the reply sent")
            server.server.close()  # type: ignore[union-attr]
            with pytest.raises(httpcore.RemoteProtocolError, match="closed the connection"):
                await task
            await kept.aclose()
        (tmp_path / "s").unlink(missing_ok=True)


async def test_a_long_unix_response_arrives_in_many_reads(tmp_path: Path) -> None:
    """Bodies of megabytes, sized and chunked, read whole over many reads; past
    ``max_body``, `BodyTooLarge` and the connection closed."""
    big = bytes(range(256)) * 12_000  # about 3 MB
    sized = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%b" % (len(big), big)
    chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + b"".join(
        b"%x\r\n%b\r\n" % (len(part), part) for part in
        (big[i:i + 70_000] for i in range(0, len(big), 70_000))) + b"0\r\n\r\n"
    async with _replies(tmp_path / "s", [sized, chunked, sized, chunked, _OK]) as server:
        kept = _unix(server)
        for _ in range(2):
            assert await kept.request(b"GET", b"/x", [], b"", 2.0, len(big)) == (200, big)
        for _ in range(2):
            with pytest.raises(BodyTooLarge):
                await kept.request(b"GET", b"/x", [], b"", 2.0, len(big) - 1)
        assert await _ask(kept) == (200, b"ok")
        await kept.aclose()
    assert server.connections == 3


async def test_an_answer_before_the_whole_request_is_read(tmp_path: Path) -> None:
    """A server that answers (413) and closes before reading a long body: the answer is
    the response, as httpcore reads it, and the connection is not kept."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 413 Content Too Large\r\ncontent-length: 3\r\n"
                     b"connection: close\r\n\r\nbig")
        await writer.drain()
        writer.close()

    server = await asyncio.start_unix_server(serve, str(tmp_path / "s"))
    try:
        kept = UnixConnections(str(tmp_path / "s"), b"arrowgate", keepalive=30.0)
        assert await kept.request(b"POST", b"/x", [], b"x" * 8_000_000, 5.0, 100) == \
            (413, b"big")
        assert kept._idle == []
        await kept.aclose()
    finally:
        server.close()
        await server.wait_closed()


async def test_what_follows_a_unix_response_is_never_read_as_part_of_it(tmp_path: Path) -> None:
    """Bytes after a whole response (in the same read) only cost the connection, however
    they look; HTTP/1.0 is never kept, even when it says keep-alive; a ``chunked`` with a
    space after it is chunked."""
    replies = [
        _OK + b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n",
        _OK + b"HTTP/2.0 200 OK\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\ncontent-length: 2\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked \r\n\r\n2\r\nok\r\n0\r\n\r\n",
        _OK,
    ]
    async with _replies(tmp_path / "s", replies) as server:
        kept = _unix(server)
        for _ in range(5):  # (the server takes its replies off the list)
            assert await _ask(kept) == (200, b"ok")
        await kept.aclose()
    assert server.connections == 4  # the last two on one connection


async def test_long_trailers_are_refused(tmp_path: Path) -> None:
    """What is not body — here a trailer of 1 MB — is bounded (`MAX_HEAD`), as the head is."""
    reply = (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n"
             b"x-long: " + b"a" * 1_000_000 + b"\r\n\r\n")
    async with _replies(tmp_path / "s", [reply]) as server:
        kept = _unix(server)
        with pytest.raises(httpcore.RemoteProtocolError, match="too long"):
            await kept.request(b"GET", b"/x", [], b"", 2.0, 1 << 24)
        await kept.aclose()


async def test_closing_wakes_a_request_in_flight(tmp_path: Path) -> None:
    """`aclose` while a request waits for its answer: the request ends at once with an
    error (its connection shut down), not after its whole timeout."""
    async with Server(tmp_path / "s", hold=True) as server:
        kept = UnixConnections(str(server.path), b"arrowgate", keepalive=30.0)
        task = asyncio.ensure_future(kept.request(b"GET", b"/x", [], b"", 30.0, 1 << 20))
        await _until(lambda: len(server.requests) == 1, "the request sent")
        await kept.aclose()
        with pytest.raises(httpcore.RemoteProtocolError):
            await asyncio.wait_for(task, 5.0)
        server.go.set()
