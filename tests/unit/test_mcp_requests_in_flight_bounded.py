"""`arrowgate mcp` holds at most `MAX_IN_FLIGHT` requests (and `MAX_IN_FLIGHT_BYTES` of
their lines) in flight; a request beyond is answered at once with an error, so a client
that writes requests faster than they are answered cannot make the server buffer without
bound (SPEC §10.2).

Found in round 20: every ``tools/call`` line was read and parsed at once and handed to
a task of its own, waiting for one of the service client's ten connections; a client
writing requests without reading the answers (2,000 calls of 1 MB arguments) grew the
server by about half a megabyte a request, with no end.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anyio
import pytest

from engine.app import mcp

_TOOLS = [{"name": "c1__echo", "card": "c1", "tool": "echo", "description": "",
           "input": {"type": "object"}}]


class _SlowService:
    """The service as `AgentMCP` sees it, whose tool calls are answered only when told."""

    agent = "a1"

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.calls = 0
        # Answered after 10 s whatever happens: a failing test ends instead of
        # waiting for ever on calls shielded from its cancellation.
        asyncio.get_running_loop().call_later(10, self.release.set)

    async def tools(self) -> list[dict[str, Any]]:
        return _TOOLS

    async def call(self, card: str, tool: str, args: dict[str, Any],
                   wait: float | None = None) -> dict[str, Any]:
        self.calls += 1
        await self.release.wait()
        return {"id": "tc", "state": "refused", "decision": {"message": "done"}}

    async def cancel(self, call_id: str) -> dict[str, Any]:
        return {}


class _Out:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    async def send(self, data: bytes) -> None:
        self.lines.append(json.loads(data))

    async def write(self, text: str) -> None:
        self.lines.append(json.loads(text))

    async def flush(self) -> None:
        pass


def _call(rid: int, extra: dict[str, Any] | None = None, text: str = "x") -> str:
    params: dict[str, Any] = {"name": "c1__echo", "arguments": {"text": text}, **(extra or {})}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": params}) + "\n"


async def _until(predicate: Any) -> None:
    for _ in range(500):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never happened")


async def test_a_request_beyond_the_bound_is_refused_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp, "POLL", 3600.0)
    service = _SlowService()
    agent = mcp.AgentMCP(service)  # type: ignore[arg-type]
    await agent._list_tools(None)
    out = _Out()
    async with anyio.create_task_group() as tg:
        await agent._take('{"jsonrpc":"2.0","method":"notifications/initialized"}', out, tg)
        for rid in range(mcp.MAX_IN_FLIGHT):
            assert await agent._take(_call(rid), out, tg)
        assert out.lines == []
        assert await agent._take(_call(999), out, tg)
        (busy,) = out.lines
        assert busy["id"] == 999 and busy["error"]["code"] == -32000
        assert "in flight" in busy["error"]["message"]
        await _until(lambda: service.calls == mcp.MAX_IN_FLIGHT)
        # Answered, the room is there again.
        service.release.set()
        await _until(lambda: len(out.lines) == 1 + mcp.MAX_IN_FLIGHT)
        assert await agent._take(_call(1000), out, tg)
        await _until(lambda: len(out.lines) == 2 + mcp.MAX_IN_FLIGHT)
    assert out.lines[-1]["id"] == 1000 and "result" in out.lines[-1]


async def test_the_bytes_in_flight_are_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp, "POLL", 3600.0)
    monkeypatch.setattr(mcp, "MAX_IN_FLIGHT_BYTES", 10_000)
    service = _SlowService()
    agent = mcp.AgentMCP(service)  # type: ignore[arg-type]
    await agent._list_tools(None)
    out = _Out()
    async with anyio.create_task_group() as tg:
        await agent._take('{"jsonrpc":"2.0","method":"notifications/initialized"}', out, tg)
        for rid in range(3):
            assert await agent._take(_call(rid, text="y" * 3000), out, tg)
        assert out.lines == []
        assert await agent._take(_call(3, text="y" * 3000), out, tg)
        assert [line["id"] for line in out.lines] == [3]
        service.release.set()
        await _until(lambda: len(out.lines) == 4)


async def test_requests_the_sdk_answers_count_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request that is not plain goes the SDK's way: held there, it is counted until
    its answer is written."""
    monkeypatch.setattr(mcp, "POLL", 3600.0)
    service = _SlowService()
    agent = mcp.AgentMCP(service)  # type: ignore[arg-type]
    reader = asyncio.StreamReader()
    out = _Out()
    init = {"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    reader.feed_data((json.dumps(init) + "\n").encode())
    reader.feed_data(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    # Not plain (a field the short way leaves to the SDK): the SDK's to answer.
    for rid in range(mcp.MAX_IN_FLIGHT + 5):
        reader.feed_data(_call(rid, {"task": None}).encode())
    options = agent.server.create_initialization_options()
    async with anyio.create_task_group() as tg:
        async with mcp._lines_transport(mcp._PipeLines(reader), out, agent, tg) as (r, w):
            tg.start_soon(agent.server.run, r, w, options)
            await _until(lambda: len(out.lines) == 6)
            await asyncio.sleep(0.2)
            assert [line.get("id") for line in out.lines] == [
                "i", *range(mcp.MAX_IN_FLIGHT, mcp.MAX_IN_FLIGHT + 5)]
            assert all(line["error"]["code"] == -32000 for line in out.lines[1:])
            service.release.set()
            await _until(lambda: len(out.lines) == 6 + mcp.MAX_IN_FLIGHT)
            # Answered, there is room again.
            reader.feed_data(_call(7777, {"task": None}).encode())
            await _until(lambda: len(out.lines) == 7 + mcp.MAX_IN_FLIGHT)
            assert out.lines[-1]["id"] == 7777 and "result" in out.lines[-1]
            tg.cancel_scope.cancel()
