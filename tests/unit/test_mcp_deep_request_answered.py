"""A request nested too deep for any JSON reader `arrowgate mcp` uses is still answered,
with an error response carrying its id: the agent is never left waiting for an answer
that will not come (SPEC §10.2).

Found in round 20: a ``tools/call`` whose arguments nested past about 1,000 levels was
refused by the strict reader, by Python's (RecursionError) and by the SDK, which logged
"Internal Server Error" and never answered the request.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from engine.app import mcp


class _Out:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    async def send(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        self.lines.append(json.loads(data))


def _deep(rid: str, depth: int, *, id_last: bool = False) -> str:
    args = '{"x":' + "[" * depth + "]" * depth + "}"
    head = '"jsonrpc":"2.0","method":"tools/call","params":{"name":"c1__echo","arguments":%s}' \
        % args
    rid_json = json.dumps(rid)
    return ("{" + head + ',"id":' + rid_json + "}" if id_last
            else '{"id":' + rid_json + "," + head + "}") + "\n"


async def test_a_request_nested_too_deep_gets_an_error_with_its_id() -> None:
    agent = mcp.AgentMCP(object())  # type: ignore[arg-type]
    out = _Out()
    async with anyio.create_task_group() as tg:
        for rid, depth, id_last in (("d1", 5_000, False), ("d2", 100_000, True),
                                    ("d3", 1_100, False)):
            assert await agent._take(_deep(rid, depth, id_last=id_last), out, tg)
            assert out.lines[-1]["id"] == rid
            assert out.lines[-1]["error"]["code"] == -32600
            assert "nested" in out.lines[-1]["error"]["message"]


async def test_what_is_no_request_stays_the_sdks() -> None:
    """A deep notification, or deep text with no id at the top, is the SDK's to report."""
    agent = mcp.AgentMCP(object())  # type: ignore[arg-type]
    out = _Out()
    deep = "[" * 5_000 + "]" * 5_000
    async with anyio.create_task_group() as tg:
        for line in ('{"jsonrpc":"2.0","method":"x","params":{"a":%s}}' % deep,
                     '{"jsonrpc":"2.0","params":{"id":1,"a":%s}}' % deep,
                     '{"jsonrpc":"2.0","method":"x","params":{"id":1,"a":%s}}' % deep,
                     deep, '{"id":1,"params":%s}' % deep):
            assert not await agent._take(line, out, tg), line[:80]
    assert out.lines == []


async def test_a_deep_request_whose_id_is_no_id_is_answered_with_null() -> None:
    """Its id (``true``) is none MCP takes: answered as JSON-RPC answers an Invalid
    Request, with ``"id": null`` (round 22; before, it was left to the SDK, which
    never answered it)."""
    agent = mcp.AgentMCP(object())  # type: ignore[arg-type]
    out = _Out()
    deep = "[" * 5_000 + "]" * 5_000
    async with anyio.create_task_group() as tg:
        assert await agent._take('{"jsonrpc":"2.0","id":true,"method":"x","params":%s}'
                                 % deep, out, tg)
    assert [(a["id"], a["error"]["code"]) for a in out.lines] == [(None, -32600)]


async def test_a_request_the_sdk_cannot_read_is_answered_with_its_id() -> None:
    """JSON that the strict reader takes but the SDK's parser refuses (nested past its
    limit of about 200 levels, or not a request the protocol knows: params that are no
    object) is answered too, when it names its id; the SDK only logged it."""
    import asyncio

    agent = mcp.AgentMCP(object())  # type: ignore[arg-type]
    reader = asyncio.StreamReader()

    class _Pipe(_Out):
        async def write(self, text: str) -> None:
            self.lines.append(json.loads(text))

        async def flush(self) -> None:
            pass

    out = _Pipe()
    deep = "[" * 300 + "]" * 300
    for line in ('{"jsonrpc":"2.0","id":"p1","method":"tools/call","params":{"name":"c1__echo",'
                 '"arguments":{"x":%s},"task":null}}' % deep,
                 '{"jsonrpc":"2.0","id":"p2","method":"tools/list","params":5}',
                 '{"jsonrpc":"2.0","method":"notifications/x","params":5}',
                 '{"jsonrpc":"2.0","id":"p3","method":"ping"}'):
        reader.feed_data(line.encode() + b"\n")
    reader.feed_eof()
    received: list[object] = []
    async with anyio.create_task_group() as tg:
        async with mcp._lines_transport(mcp._PipeLines(reader), out, agent, tg) as (r, w):
            async for message in r:
                received.append(message)
            await w.aclose()
            await r.aclose()
    assert [(line["id"], line["error"]["code"]) for line in out.lines if "id" in line] == [
        ("p1", -32600), ("p2", -32600)]
    # The notification, which nobody waits for, is told as ignored, naming why (round 31:
    # the SDK said "Internal Server Error"); the ping still reaches the SDK.
    told = [line["params"]["data"] for line in out.lines if "id" not in line]
    assert len(told) == 1 and "ignored line 3" in told[0] and "params" in told[0], told
    assert len(received) == 1 and not isinstance(received[0], Exception)
