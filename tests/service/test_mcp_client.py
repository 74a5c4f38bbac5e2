"""The client `arrowgate mcp` talks to the service with (issue 17; httpcore's connections,
kept by `engine.app.kept`).

Against a scripted server on a Unix socket: it keeps connections alive, reads
Content-Length and chunked bodies, never sends a request on a connection the
server closed, quotes ids as one path segment, and reports a dead service as
`ServiceError` rather than hanging.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine.app import mcp
from engine.app.mcp import ServiceClient, ServiceError
from tests.conftest import polls
from tests.service.scripted import Scripted


def _ok(body: object, extra: bytes = b"") -> bytes:
    data = json.dumps(body).encode()
    return (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n%b\r\n"
            % (len(data), extra)) + data


#: The service's tool list for agent a1: card c1's ``echo``.
_ECHO_TOOLS = [{"name": "c1__echo", "card": "c1", "tool": "echo", "description": "",
                "input": {"type": "object"}}]


def _open_then_cancelled() -> list[bytes]:
    """The service's replies to a tool list, a tool call that stays open, and its cancel."""
    still = {"id": "tc1", "state": "open", "agent": "a1", "card": "c1", "tool": "echo",
             "result": None, "error": None, "held": []}
    opened = {"id": "tc1", "state": "open", "decision": {"outcome": "ok"}, "call": still}
    return [_ok(_ECHO_TOOLS), _ok(opened), _ok({**still, "state": "cancelled"})]


async def test_keeps_the_connection_and_reads_both_framings(tmp_path: Path) -> None:
    chunked = (b"HTTP/1.1 404 Not Found\r\ntransfer-encoding: chunked\r\n\r\n"
               b"5\r\n{\"mes\r\n11;x=1\r\nsage\": \"no such\"}\r\n0\r\n\r\n")
    async with Scripted(tmp_path / "s", [_ok({"id": "tc1", "state": "open"}), chunked,
                                         _ok(_ECHO_TOOLS)]) as server:
        client = ServiceClient(str(server.path), "agt_secret", "a 1")
        assert await client.call("c1", "echo", {"text": "é"}) == {"id": "tc1", "state": "open"}
        assert await client.get("/v1/prompts/p1") == {"problem": True, "status": 404,
                                                      "message": "no such"}
        assert await client.tools() == _ECHO_TOOLS
        await client.aclose()
    assert server.connections == 1
    first, second, third = server.requests
    assert first.startswith(b"POST /v1/tool-calls HTTP/1.1\r\n")
    assert b"Authorization: Bearer agt_secret\r\n" in first
    assert json.loads(first.split(b"\r\n\r\n", 1)[1]) == {
        "agent": "a 1", "card": "c1", "tool": "echo", "args": {"text": "é"}}
    assert second.startswith(b"GET /v1/prompts/p1 HTTP/1.1\r\n")
    # The agent's id is one path segment, quoted.
    assert third.startswith(b"GET /v1/agents/a%201/tools HTTP/1.1\r\n")


async def test_ids_stay_one_segment(tmp_path: Path) -> None:
    async with Scripted(tmp_path / "s", [_ok({"state": "open"}), _ok({})]) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        await client.wait("tc1/../x?y", 2.0)
        await client.cancel("tc 2")
        await client.aclose()
    assert server.requests[0].startswith(
        b"GET /v1/tool-calls/tc1%2F..%2Fx%3Fy/wait?timeout=2 HTTP/1.1\r\n")
    assert server.requests[1].startswith(b"POST /v1/tool-calls/tc%202/cancel HTTP/1.1\r\n")
    assert b"Content-Length: 0\r\n" in server.requests[1]


async def test_a_big_integer_in_an_answer_reads_back_exactly(tmp_path: Path) -> None:
    """A card's result holding an integer past 64 bits reaches the agent exact (orjson
    alone would read it as a float)."""
    async with Scripted(tmp_path / "s", [_ok({"n": 2**64 + 1, "m": -(2**63) - 1})]) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        got = await client.get("/a")
        await client.aclose()
    assert got == {"n": 2**64 + 1, "m": -(2**63) - 1}
    assert type(got["n"]) is int and type(got["m"]) is int


async def test_a_connection_the_server_closed_is_not_reused(tmp_path: Path) -> None:
    closing = _ok({"n": 3}, b"connection: close\r\n")
    async with Scripted(tmp_path / "s", [_ok({"n": 1}), _ok({"n": 2}), closing, _ok({"n": 4})],
                        close_after=True) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        assert await client.get("/a") == {"n": 1}
        await asyncio.sleep(0.05)  # the server has closed it meanwhile
        assert await client.get("/b") == {"n": 2}
        assert await client.get("/c") == {"n": 3}
        assert await client.get("/d") == {"n": 4}
        await client.aclose()
    assert server.connections == 4
    assert len(server.requests) == 4  # each sent once, none lost on a closed connection


async def test_idle_connections_are_given_up_after_a_while(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp, "IDLE_REUSE", 0.0)
    async with Scripted(tmp_path / "s", [_ok({}), _ok({})]) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        await client.get("/a")
        await asyncio.sleep(0.01)
        await client.get("/b")
        await client.aclose()
    assert server.connections == 2


async def test_a_dead_or_mute_service_is_a_service_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = ServiceClient(str(tmp_path / "nobody"), "t", "a1")
    with pytest.raises(ServiceError, match="cannot reach"):
        await client.tools()
    async with Scripted(tmp_path / "s", [b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{"],
                        close_after=True) as server:
        with pytest.raises(ServiceError, match="closed the connection"):
            await ServiceClient(str(server.path), "t", "a1").get("/x")
    async with Scripted(tmp_path / "g", [b"SSH-2.0-OpenSSH\r\n\r\n"]) as server:
        with pytest.raises(ServiceError, match="answered badly"):
            await ServiceClient(str(server.path), "t", "a1").get("/x")
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT", 0.1)
    # Half a head, then silence (the server waits for a next request that never comes).
    async with Scripted(tmp_path / "m", [b"HTTP/1.1 200 OK\r\n", b""]) as server:
        with pytest.raises(ServiceError, match="did not answer"):
            await ServiceClient(str(server.path), "t", "a1").get("/x")


def test_a_token_that_could_forge_headers_is_refused() -> None:
    for bad in ("", "a\r\nX-Evil: 1", "two words", "caf\u00e9"):
        with pytest.raises(ValueError):
            ServiceClient("/tmp/none", bad, "a1")
    with pytest.raises(ValueError, match="no host"):
        ServiceClient("http://", "t", "a1")


def test_the_command_says_what_is_wrong_with_its_token_or_address(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    token = tmp_path / "a1.token"
    for text, address, said in (("two words", "/tmp/s.sock", "one word of printable ASCII"),
                                ("agt_x", "http://h:99999", "Port out of range")):
        token.write_text(text)
        token.chmod(0o600)  # private, as the command requires: the token's text is judged
        args = argparse.Namespace(agent="a1", service=address, token_file=str(token), db=None)
        assert mcp._cmd_mcp(args) == 2
        assert said in capsys.readouterr().err


async def test_loopback_tcp_too(tmp_path: Path) -> None:
    """``--service http://127.0.0.1:PORT``: the same client over TCP, kept alive."""
    requests: list[bytes] = []
    done = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                requests.append(await reader.readuntil(b"\r\n\r\n"))
                writer.write(_ok({"n": len(requests)}))
                await writer.drain()
        except asyncio.IncompleteReadError:
            writer.close()
            await writer.wait_closed()
        finally:
            done.set()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        client = ServiceClient(f"http://127.0.0.1:{port}/", "t", "a1")
        assert [await client.get("/x"), await client.get("/y")] == [{"n": 1}, {"n": 2}]
        await client.aclose()
        # The server's side closed too, before the test's loop ends.
        await asyncio.wait_for(done.wait(), 5)
    finally:
        server.close()
        await server.wait_closed()
    assert requests[0].startswith(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)
    assert len(requests) == 2


async def test_a_tool_call_is_one_request_and_an_older_service_still_works(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`arrowgate mcp` opens a tool call with ``?wait`` and takes its answer from that
    one response; a service that answers without ``call`` gets the wait as a request."""
    from mcp.shared.memory import create_connected_server_and_client_session

    monkeypatch.setattr(mcp, "POLL", 3600.0)  # no tool-list poll among the scripted replies
    opened = {"id": "tc1", "state": "open", "decision": {"outcome": "ok"}}
    answered = {"id": "tc1", "state": "answered", "agent": "a1", "card": "c1",
                "tool": "echo", "result": {"n": 1}, "error": None, "held": []}
    async with Scripted(tmp_path / "s", [_ok(_ECHO_TOOLS), _ok(opened), _ok(answered),
                                         _ok({**opened, "call": answered})]) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        agent = mcp.AgentMCP(client)
        async with create_connected_server_and_client_session(agent.server) as session:
            await session.list_tools()
            for _ in range(2):
                result = await session.call_tool("c1__echo", {"text": "x"})
                assert not result.isError and json.loads(result.content[0].text) == {"n": 1}
        await client.aclose()
    _listed, older, its_wait, newer = server.requests
    assert older.startswith(b"POST /v1/tool-calls?wait=0.5 HTTP/1.1\r\n")
    assert its_wait.startswith(b"GET /v1/tool-calls/tc1/wait?timeout=2 HTTP/1.1\r\n")
    assert newer.startswith(b"POST /v1/tool-calls?wait=0.5 HTTP/1.1\r\n")



async def test_a_request_leaves_in_one_write(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Head and body of a POST are one write on the socket (`engine.app.onewrite`): the
    service is woken once per request, not once for the head and again for the body —
    on a Unix socket (asyncio's own socket calls) and over TCP (httpcore's anyio streams)."""
    import httpcore

    from engine.app.onewrite import OneWriteBackend

    writes: list[bytes] = []
    loop = asyncio.get_running_loop()
    sendall = loop.sock_sendall

    async def recording_sendall(sock: object, data: bytes) -> None:
        writes.append(bytes(data))
        await sendall(sock, data)  # type: ignore[arg-type]

    monkeypatch.setattr(loop, "sock_sendall", recording_sendall)

    class Recording(httpcore.AsyncNetworkStream):
        def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
            self.stream = stream

        async def write(self, buffer: bytes, timeout: float | None = None) -> None:
            writes.append(buffer)
            await self.stream.write(buffer, timeout)

        async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return await self.stream.read(max_bytes, timeout)

        async def aclose(self) -> None:
            await self.stream.aclose()

        def get_extra_info(self, info: str) -> object:
            return self.stream.get_extra_info(info)

    class Underneath(httpcore.AnyIOBackend):
        async def connect_tcp(self, *args: object, **kwargs: object) -> Recording:
            return Recording(await super().connect_tcp(*args, **kwargs))  # type: ignore[arg-type]

    body = b'{"text": "' + b"x" * 5000 + b'"}'
    async with Scripted(tmp_path / "s", [_ok({"n": 1}), _ok({"n": 2})]) as server:
        async with httpcore.AsyncConnectionPool(uds=str(server.path),
                                                network_backend=OneWriteBackend()) as pool:
            for n in (1, 2):
                r = await pool.request("POST", "http://x/v1/tool-calls",
                                       headers=[(b"Content-Type", b"application/json")],
                                       content=body)
                assert json.loads(r.content) == {"n": n}
    assert len(writes) == 2 and server.connections == 1  # one per request, the connection kept
    assert writes[0] == server.requests[0] and writes[0].endswith(body)

    writes.clear()
    received: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while len(received) < 2:
            head = await reader.readuntil(b"\r\n\r\n")
            received.append(head + await reader.readexactly(len(body)))
            writer.write(_ok({"n": len(received)}))
            await writer.drain()
        writer.close()

    tcp = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = tcp.sockets[0].getsockname()[1]
    backend = OneWriteBackend()
    backend._backend = Underneath()
    try:
        async with httpcore.AsyncConnectionPool(network_backend=backend) as pool:
            for n in (1, 2):
                r = await pool.request("POST", f"http://127.0.0.1:{port}/v1/tool-calls",
                                       headers=[(b"Content-Type", b"application/json")],
                                       content=body)
                assert json.loads(r.content) == {"n": n}
    finally:
        tcp.close()
        await tcp.wait_closed()
    assert len(writes) == 2 and writes == received


async def test_stdio_pipes_are_read_and_written_on_the_loop(monkeypatch, tmp_path) -> None:
    """Pipes at both ends: lines read and written by asyncio (no worker thread), a line
    beyond the limit given on as unparsable, the end of input ending the lines; a file
    or terminal at either end: the same lines and writes, in a worker thread
    (`engine.app.stdiofiles`; round 22: before, the SDK's own transport)."""
    import os

    monkeypatch.setattr(mcp, "MAX_LINE", 64)
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    with open(in_r, "rb", 0) as stdin, open(out_w, "wb", 0) as stdout:
        monkeypatch.setattr("sys.stdin", stdin)
        monkeypatch.setattr("sys.stdout", stdout)
        async with mcp._stdio() as (lines, out):
            assert isinstance(lines, mcp._PipeLines)
            os.write(in_w, b'{"a": 1}\n' + b"x" * 100 + b'\n{"b": "\xc3\xa9"}\n')
            os.close(in_w)
            got = [line async for line in lines]
            await out.write('{"c": "\u00e9"}\n')
            await out.flush()
        # the transports closed their copies: stdin and stdout stay open
        assert not stdin.closed and not stdout.closed
    # the line beyond the limit is dropped, given on as one that does not parse
    assert got == ['{"a": 1}\n', "\n", '{"b": "\u00e9"}\n']
    assert os.read(out_r, 100) == '{"c": "\u00e9"}\n'.encode()
    os.close(out_r)
    from engine.app.stdiofiles import FileLines, FileOut

    (tmp_path / "in.txt").write_bytes(b'{"a": 1}\n' + b"x" * 100 + b'\n{"b": "\xc3\xa9"}\n')
    with open(tmp_path / "in.txt", "rb") as regular, open(tmp_path / "out.txt", "wb") as file:
        monkeypatch.setattr("sys.stdin", regular)
        monkeypatch.setattr("sys.stdout", file)
        async with mcp._stdio() as (lines, out):
            assert isinstance(lines, FileLines) and isinstance(out, FileOut)
            assert [line async for line in lines] == got
            await out.write('{"c": "\u00e9"}\n')
            await out.send(b'{"d": 1}\n')
        assert not regular.closed and not file.closed
    assert (tmp_path / "out.txt").read_bytes() == '{"c": "\u00e9"}\n{"d": 1}\n'.encode()


class _Out:
    """What `AgentMCP._take` writes, line by line."""

    def __init__(self) -> None:
        self.lines: list[dict[str, object]] = []

    async def send(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        self.lines.append(json.loads(data))


def _request(rid: object, params: object, **extra: object) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params,
                       **extra}) + "\n"


async def _initialized(client: ServiceClient, tg: Any) -> tuple[mcp.AgentMCP, _Out]:
    """An agent on ``client`` whose tools are listed and whose MCP client said
    ``notifications/initialized``: `_take` answers plain calls from here on."""
    agent = mcp.AgentMCP(client)
    await agent._list_tools(None)
    out = _Out()
    await agent._take('{"jsonrpc":"2.0","method":"notifications/initialized"}', out, tg)
    return agent, out


async def test_a_plain_tool_call_is_answered_as_the_sdk_answers_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On pipes, `_take` answers a plain ``tools/call`` itself (after the client's
    ``notifications/initialized``) with the very JSON-RPC response the SDK writes for
    the same call; anything not plain, or before initialization, is left to the SDK."""
    import anyio
    from mcp import types
    from mcp.shared.memory import create_connected_server_and_client_session

    monkeypatch.setattr(mcp, "POLL", 3600.0)

    def answered(result: object) -> bytes:
        return _ok({"id": "tc1", "state": "open", "decision": {"outcome": "ok"}, "call": {
            "id": "tc1", "state": "answered", "agent": "a1", "card": "c1", "tool": "echo",
            "result": result, "error": None, "held": []}})

    refused = _ok({"id": None, "state": "refused", "decision": {"message": "no arrow"}})
    result = {"text": "h\u00e9 \"x\"", "n": [1, 2.5, None]}
    replies = [_ok(_ECHO_TOOLS), answered(result), refused]
    async with Scripted(tmp_path / "s", replies * 2) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        # The SDK's way: its response as it writes it.
        sdk = mcp.AgentMCP(client)
        expected = []
        async with create_connected_server_and_client_session(sdk.server) as session:
            await session.list_tools()
            for _ in range(2):
                r = await session.call_tool("c1__echo", {"text": "x"})
                response = types.JSONRPCResponse(jsonrpc="2.0", id=7, result=r.model_dump(
                    by_alias=True, mode="json", exclude_none=True))
                expected.append(json.loads(types.JSONRPCMessage(response).model_dump_json(
                    by_alias=True, exclude_none=True)))
        # The short way, on the same replies.
        agent = mcp.AgentMCP(client)
        await agent._list_tools(None)
        out = _Out()
        plain = _request(7, {"name": "c1__echo", "arguments": {"text": "x"}})
        async with anyio.create_task_group() as tg:
            assert not await agent._take(plain, out, tg)  # not initialized yet: the SDK's
            assert not await agent._take('{"jsonrpc": "2.0", "method": '
                                         '"notifications/initialized"}\n', out, tg)
            for line in (_request(7, {"name": "c1__echo", "arguments": ["x"]}),
                         _request(7, {"name": "c1__echo", "other": 1}),
                         _request(7, {"name": "c1__nope"}),  # not listed: the SDK looks again
                         _request(7, {"name": "c1__echo", "_meta": {"x": 1}}),
                         _request(7, {"name": "c1__echo"}, extra=1),
                         plain.replace('"2.0"', '"1.0"'), "{not json\n"):
                assert not await agent._take(line, out, tg), line
            for _ in range(2):
                assert await agent._take(plain, out, tg)
                await _until_len(out.lines, len(expected[:len(out.lines) + 1]))
        await client.aclose()
    assert out.lines == expected
    assert expected[0]["result"] == {"content": [{"type": "text", "text": json.dumps(
        result, sort_keys=True)}], "isError": False}
    assert expected[1]["result"]["isError"] is True


async def _until_len(items: list[object], n: int) -> None:
    for _ in polls():
        if len(items) >= n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(items)} of {n}")


async def test_a_call_taken_on_the_short_way_is_cancelled_as_the_sdk_cancels(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``notifications/cancelled`` for a call `_take` answers: the SDK's error response
    at once, no result afterwards (not even one already on its way back), and the tool
    call cancelled on the service. (Cancelled while it waits, and progress, over a real
    process: tests/service/test_mcp.py.)"""
    import anyio

    monkeypatch.setattr(mcp, "POLL", 3600.0)
    async with Scripted(tmp_path / "s", _open_then_cancelled()) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        async with anyio.create_task_group() as tg:
            agent, out = await _initialized(client, tg)
            assert await agent._take(_request("r1", {"name": "c1__echo", "arguments": {},
                                                      "_meta": {"progressToken": 5}}), out, tg)
            assert await agent._take(json.dumps({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": "r1", "reason": "Esc on \"tools/call\""}}), out, tg)
            # a second cancel names no call in flight: the SDK's (which ignores it)
            assert not await agent._take(json.dumps({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": "r1"}}), out, tg)
        await client.aclose()
    (error,) = out.lines
    assert error == {"jsonrpc": "2.0", "id": "r1",
                     "error": {"code": 0, "message": "Request cancelled"}}
    assert server.requests[-1].startswith(b"POST /v1/tool-calls/tc1/cancel HTTP/1.1\r\n")


async def test_the_short_way_takes_cancels_as_the_sdk_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cancel naming ``true`` is not one for request 1 (the SDK's request ids are
    strict ints or text; ``True == 1`` in Python), and a cancel whose method is written
    with an escaped slash is the same notification to the SDK, so the call is cancelled."""
    import anyio

    monkeypatch.setattr(mcp, "POLL", 3600.0)
    async with Scripted(tmp_path / "s", _open_then_cancelled()) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        async with anyio.create_task_group() as tg:
            agent, out = await _initialized(client, tg)
            assert await agent._take(_request(1, {"name": "c1__echo", "arguments": {}}), out, tg)
            assert not await agent._take(
                '{"jsonrpc":"2.0","method":"notifications/cancelled",'
                '"params":{"requestId":true}}', out, tg)
            assert 1 in agent._inflight and out.lines == []
            assert await agent._take(
                '{"jsonrpc":"2.0","method":"notifications\\/cancelled",'
                '"params":{"requestId":1}}', out, tg)
        await client.aclose()
    assert out.lines == [{"jsonrpc": "2.0", "id": 1,
                          "error": {"code": 0, "message": "Request cancelled"}}]
    assert server.requests[-1].startswith(b"POST /v1/tool-calls/tc1/cancel HTTP/1.1\r\n")


async def test_a_request_refused_as_json_is_answered_with_its_id(tmp_path: Path) -> None:
    """NaN or a lone surrogate escape: JSON to Python's reader, refused by the strict one
    (and by the SDK, which would then never answer); the request gets an error response
    with its own id, so the agent is not left waiting. Text that is no JSON at all, or a
    notification, is still the SDK's."""
    import anyio

    async with Scripted(tmp_path / "s", [_ok(_ECHO_TOOLS)]) as server:
        client = ServiceClient(str(server.path), "t", "a1")
        async with anyio.create_task_group() as tg:
            agent, out = await _initialized(client, tg)
            for rid, line in ((4, _request(4, {"name": "c1__echo",
                                               "arguments": {"text": "\ud800"}})),
                              ("n", _request("n", {"name": "c1__echo",
                                                   "arguments": {"n": "NaN"}}).replace(
                                  '"NaN"', "NaN"))):
                assert "\\ud800" in line or "NaN" in line
                assert await agent._take(line, out, tg)
                assert out.lines[-1]["id"] == rid and out.lines[-1]["error"]["code"] == -32600
            for line in ("{not json", '{"jsonrpc":"2.0","method":"x","params":{"n":NaN}}'):
                assert not await agent._take(line, out, tg), line
            # An id that is no id (round 22): answered with "id": null.
            assert await agent._take('{"jsonrpc":"2.0","id":true,"method":"x",'
                                     '"params":{"n":NaN}}', out, tg)
            assert out.lines[-1]["id"] is None and out.lines[-1]["error"]["code"] == -32600
        await client.aclose()
    assert len(out.lines) == 3
