"""A line `arrowgate mcp` reads from its agent is held to a bound on its bytes and one on
its JSON values before anything of it is read into objects (SPEC §10.2: hostile input
never floods the bridge; a bad request gets an error naming what was wrong).

Found in round 32 (bounds32): a line of up to 64 MiB was read whole by the bridge, and
again by the MCP SDK, before any bound: 8 MiB of empty objects in a tool call's
arguments built some 2.8 million objects (hundreds of MB) only for the service to
refuse the body; and a request of 17 MiB with nothing else in flight was told the
bridge was busy and to send it again once one was answered, which never helps.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import types

from engine.app import mcp
from engine.service import jsonread
from engine.service.bodyvalues import MAX_BODY_VALUES
from tests.unit.mcplines import INITIALIZE, request, serve

#: The most bytes of a line the bridge reads (before round 32 there was no bound of its
#: own: the largest answer from the service, `MAX_BODY`).
MAX_LINE: int = getattr(mcp, "MAX_LINE", mcp.MAX_BODY)


class _Out:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    async def send(self, data: bytes) -> None:
        self.lines.append(json.loads(data))


async def _answers(lines: list[str]) -> list[dict[str, Any]]:
    agent = mcp.AgentMCP(object())  # type: ignore[arg-type]
    agent._ready = True
    out = _Out()
    async with anyio.create_task_group() as tg:
        for line in lines:
            await agent._take(line, out, tg)  # type: ignore[arg-type]
    return out.lines


def _call(rid: int | str, arguments: str, *, id_last: bool = False) -> str:
    """A tools/call's line, its id first or last, its arguments as given."""
    params = '{"name":"c1__echo","arguments":' + arguments + "}"
    if id_last:
        return '{"jsonrpc":"2.0","method":"tools/call","params":' + params + \
            ',"id":' + json.dumps(rid) + "}"
    return '{"jsonrpc":"2.0","id":' + json.dumps(rid) + \
        ',"method":"tools/call","params":' + params + "}"


async def test_a_line_of_too_many_values_is_answered_unread(monkeypatch) -> None:
    """A request whose line holds more JSON values than a request body may is answered
    with an error naming its id and the bound, and a notification is told as ignored,
    none of them read into objects (by the bridge or by the SDK); the next is served."""
    # GIVEN lines of more values than the service takes in a body: requests with their
    # id first and last, a notification, then a ping
    flood = "[" + ",".join(["{}"] * MAX_BODY_VALUES) + "]"
    lines: list[str | dict[str, Any]] = [
        INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _call(4, '{"x":' + flood + "}"), _call("r-5", '{"x":' + flood + "}", id_last=True),
        '{"jsonrpc":"2.0","method":"notifications/x","params":' + flood + "}",
        request(9, "ping")]

    def unread(read: Any) -> Any:
        def reading(text: Any, *args: Any, **kwargs: Any) -> Any:
            assert len(text) < len(flood), "a flooded line was read"
            return read(text, *args, **kwargs)
        return reading

    # WHEN the bridge serves them, no JSON reader allowed to read one whole
    monkeypatch.setattr(jsonread, "loads", unread(jsonread.loads))
    monkeypatch.setattr(json, "loads", unread(json.loads))
    monkeypatch.setattr(types.JSONRPCMessage, "model_validate_json",
                        unread(types.JSONRPCMessage.model_validate_json))
    out = await serve(lines, monkeypatch)
    # THEN each request is answered, naming the bound; the notification is told ignored
    for rid in (4, "r-5"):
        answer = out.answer(rid)
        assert answer["error"]["code"] == -32600, answer
        assert f"more than {MAX_BODY_VALUES:,} JSON values" in answer["error"]["message"]
    told = [m["params"]["data"] for m in out.lines if m.get("method") == "notifications/message"]
    assert len(told) == 1 and "ignored line 5" in told[0], told
    assert f"more than {MAX_BODY_VALUES:,} JSON values" in told[0]
    assert out.answer(9)["result"] == {}


async def test_a_line_past_its_byte_bound_is_told_so_not_busy() -> None:
    """A request on a line longer than a line may be is refused naming that bound, never
    told the bridge is busy (nothing else is in flight; sending it again cannot help)."""
    # GIVEN one tool call of 17 MiB, nothing else in flight, read from a pipe
    import asyncio

    big = _call(11, '{"text":"' + "v" * (17 << 20) + '"}') + "\n"
    reader = asyncio.StreamReader(limit=MAX_LINE)
    reader.feed_data(big.encode())
    reader.feed_eof()
    read = [line async for line in mcp._PipeLines(reader)]
    # WHEN the bridge takes it
    answers = await _answers(read)
    # THEN it is refused for its length, once
    assert len(answers) == 1 and answers[0]["id"] == 11
    message = answers[0]["error"]["message"]
    assert "busy" not in message and f"{MAX_LINE:,} bytes a line may be" in message


def test_the_line_bound_is_what_a_request_may_hold_in_flight() -> None:
    """A line the bridge reads is at most what its requests in flight may hold together."""
    assert MAX_LINE <= mcp.MAX_IN_FLIGHT_BYTES


def test_the_line_value_bound_is_the_services_body_bound() -> None:
    """A line may hold as many values as a body the service reads, which its arguments go in."""
    assert mcp.MAX_LINE_VALUES == MAX_BODY_VALUES
