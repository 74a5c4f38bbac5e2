"""`arrowgate mcp` (SPEC §10.2) driven by the MCP SDK's own client over stdio.

A real `arrowgate serve` runs in a thread of the test (on a virtual clock, so
tool timeouts need no waiting); `arrowgate mcp --agent a1` runs as a process,
started by `mcp.client.stdio` as a coding agent would start it; the card is
played by the test through the service: its event stream and its token.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from engine.app.replay import VirtualClock

from .conftest import Running, mint

ARROWGATE = Path(sys.executable).with_name("arrowgate")

TOOLS = {"name": "acme.search", "version": "1.0.0", "permissions": {"agents.prompt": {}},
         "tools": [{"name": "search", "description": "Search the notes",
                    "input": {"type": "object", "properties": {"query": {"type": "string"}},
                              "required": ["query"], "additionalProperties": False}},
                   "relay"]}


def build(running: Running, folder: Path, tmp: Path) -> dict[str, str]:
    """c1 (acme.search) connected to agents a1 and a2 and to the dangerous y1.

    Writes each agent's token to a file of mode 0600 and returns the paths,
    and the card's token under ``c1``.
    """
    op = running.client()
    folder.mkdir(exist_ok=True)
    for path, body in (
            ("/v1/workspaces", {"id": "w1", "folder": str(folder)}),
            ("/v1/packages", {"manifest": TOOLS}),
            ("/v1/packages/acme.search/install", {"grant": "required"}),
            ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card", "package": "acme.search"}),
            ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
            ("/v1/workspaces/w1/nodes", {"id": "a2", "type": "agent"}),
            ("/v1/workspaces/w1/nodes", {"id": "y1", "type": "agent", "dangerous": True}),
            ("/v1/workspaces/w1/arrows", {"id": "e1", "from": "a1", "to": "c1"}),
            ("/v1/workspaces/w1/arrows", {"id": "e2", "from": "c1", "to": "y1"}),
            ("/v1/workspaces/w1/arrows", {"id": "e3", "from": "c1", "to": "a2"})):
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), r.text
    out = {"c1": mint(op, "card:c1")}
    for agent in ("a1", "a2"):
        path = tmp / f"{agent}.token"
        path.write_text(mint(op, f"agent:{agent}"))
        path.chmod(0o600)
        out[agent] = str(path)
    return out


class Card:
    """The card c1, played through the service: its events and its token."""

    def __init__(self, running: Running, token: str) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        self.http = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=running.address),
                                      base_url="http://arrowgate", headers=headers, timeout=30)
        self.calls: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._open = asyncio.Event()

    async def start(self) -> None:
        """Open the event stream (before any tool call, so none is missed)."""
        self._task = asyncio.create_task(self._read())
        await asyncio.wait_for(self._open.wait(), 30)

    async def _read(self) -> None:
        async with self.http.stream("GET", "/v1/events") as r:
            self._open.set()
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    if event["type"] == "tool.call":
                        await self.calls.put(event["data"])

    async def next_call(self) -> dict[str, Any]:
        """The next tool.call event's data."""
        return await asyncio.wait_for(self.calls.get(), 30)

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        r = await self.http.post(path, json=body)
        assert r.status_code < 500, r.text
        return dict(r.json())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await self.http.aclose()


@asynccontextmanager
async def mcp_session(running: Running, agent: str, token_file: str,
                      seen: list[str]) -> AsyncIterator[ClientSession]:
    """`arrowgate mcp --agent AGENT` as a process, with an initialised SDK client."""
    params = StdioServerParameters(
        command=str(ARROWGATE),
        args=["mcp", "--agent", agent, "--service", running.address, "--token-file",
              token_file],
        # PYTHONPATH too: a worktree's tests run the bridge of the tree they test.
        env={k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG",
                                                          "PYTHONPATH")})

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            seen.append(message.root.method)

    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, message_handler=on_message) as session:
        await session.initialize()
        yield session


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.fixture
def world(serve_at: Callable[..., Running], tmp_path: Path) -> tuple[Running, dict[str, str],
                                                                       VirtualClock]:
    clock = VirtualClock(1000.0)
    running = serve_at(clock=clock)
    return running, build(running, tmp_path / "ws", tmp_path), clock


async def _until(predicate: Callable[[], bool]) -> None:
    for _ in range(300):
        if predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("never happened")


async def test_list_call_invalid_arguments_and_refusal_after_the_arrow_goes(world: Any) -> None:
    running, tokens, _clock = world
    card = Card(running, tokens["c1"])
    await card.start()
    seen: list[str] = []
    try:
        async with mcp_session(running, "a1", tokens["a1"], seen) as session:
            listed = (await session.list_tools()).tools
            assert [t.name for t in listed] == ["c1__relay", "c1__search",
                                                "arrowgate__prompt_status"]
            search = listed[1]
            assert search.description == "Search the notes"
            assert search.inputSchema["required"] == ["query"]

            async def answer() -> None:
                call = await card.next_call()
                assert (call["agent"], call["tool"], call["args"], call["chain"]) == (
                    "a1", "search", {"query": "standup"}, ["a1", "c1"])
                await card.post(f"/v1/tool-calls/{call['id']}/result",
                                {"result": {"hits": ["notes.md"]}})

            answering = asyncio.create_task(answer())
            result = await session.call_tool("c1__search", {"query": "standup"})
            await answering
            assert not result.isError and json.loads(_text(result)) == {"hits": ["notes.md"]}

            bad = await session.call_tool("c1__search", {"query": 3})
            assert bad.isError and "args.query" in _text(bad)

            # The arrow goes; the client still lists the tool and calls it.
            assert running.client().delete("/v1/arrows/e1").status_code == 204
            refused = await session.call_tool("c1__search", {"query": "again"})
            assert refused.isError and "not-connected" in _text(refused)
            assert "draw an arrow between a1 and c1" in _text(refused)
            # One list_changed for the change, however long the client waits.
            await _until(lambda: "notifications/tools/list_changed" in seen)
            await asyncio.sleep(1.5)
            assert seen.count("notifications/tools/list_changed") == 1
            assert [t.name for t in (await session.list_tools()).tools] == [
                "arrowgate__prompt_status"]
    finally:
        await card.close()
    rows = running.client().get("/v1/log", params={"card": "c1"}).json()
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert [(r["call"], r["outcome"]) for r in rows] == [
        ("tool:search", "ok"), ("tool:search", "answered"), ("tool:search", "denied"),
        ("tool:search", "denied")]


async def test_cancellation_timeout_and_held_prompt(world: Any) -> None:
    running, tokens, clock = world
    card = Card(running, tokens["c1"])
    await card.start()
    seen: list[str] = []
    try:
        async with mcp_session(running, "a1", tokens["a1"], seen) as session:
            # Cancelled by the client: the tool call is cancelled on the arrow log.
            calling = asyncio.create_task(session.call_tool("c1__relay", {}))
            first = await card.next_call()
            request_id = session._request_id - 1  # the tools/call just sent
            await session.send_notification(types.ClientNotification(
                types.CancelledNotification(params=types.CancelledNotificationParams(
                    requestId=request_id, reason="the user pressed Esc"))))
            with pytest.raises(McpError):
                await asyncio.wait_for(calling, 30)
            op = running.client()
            await _until(lambda: op.get(f"/v1/tool-calls/{first['id']}").json()["state"]
                         == "cancelled")

            # A card that never answers: TOOL_TIMEOUT once tool_timeout passes on the
            # service's (virtual) clock; progress is reported meanwhile.
            progress: list[float] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.append(done)

            calling = asyncio.create_task(session.call_tool("c1__relay", {},
                                                            progress_callback=on_progress))
            await card.next_call()
            await _until(lambda: len(progress) >= 1)
            clock.t += 121
            timed_out = await asyncio.wait_for(calling, 30)
            assert timed_out.isError and "TOOL_TIMEOUT" in _text(timed_out)

            # The card prompts a dangerous agent in the call: the call returns at once
            # with the held prompt, and prompt_status reports it later.
            calling = asyncio.create_task(session.call_tool("c1__relay", {}))
            call = await card.next_call()
            held = await card.post("/v1/calls", {"card": "c1", "call": "agents.prompt",
                                                 "target": "y1", "args": {"text": "deploy"},
                                                 "context": call["id"]})
            assert held["outcome"] == "held"
            ticket = json.loads(_text(await asyncio.wait_for(calling, 30)))
            assert ticket["held"][0] == {"prompt": held["prompt"], "state": "held",
                                         "agent": "y1"}
            status = await session.call_tool("arrowgate__prompt_status",
                                             {"prompt": held["prompt"]})
            assert json.loads(_text(status))["state"] == "held"
            assert op.post(f"/v1/holds/{held['prompt']}/reject").status_code == 200
            status = await session.call_tool("arrowgate__prompt_status",
                                             {"prompt": held["prompt"]})
            assert json.loads(_text(status))["code"] == "PROMPT_REJECTED"
            await card.post(f"/v1/tool-calls/{call['id']}/result", {"result": "rejected"})
            later = await session.call_tool("arrowgate__prompt_status",
                                            {"tool_call": call["id"]})
            assert json.loads(_text(later))["result"] == "rejected"
            # An id longer than any (past the server's request line, it was answered
            # "Invalid HTTP request received."): said plainly, asking nothing.
            long = await session.call_tool("arrowgate__prompt_status", {"prompt": "p" * 100_000})
            assert long.isError and "an id is at most 256 characters" in _text(long)
    finally:
        await card.close()
    rows = running.client().get("/v1/log", params={"arrow": "e1"}).json()
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert [r["outcome"] for r in rows] == ["ok", "cancelled", "ok", "expired", "ok",
                                            "answered"]


async def test_a_loop_through_two_agents_and_a_card_is_refused(world: Any) -> None:
    """a1 → c1 → a2 (a prompt in a1's tool call), then a2 → c1 → a1: LOOP_REFUSED."""
    running, tokens, _clock = world
    assert running.client().post("/v1/workspaces/w1/arrows",
                                 json={"id": "e4", "from": "a2", "to": "c1"}).status_code == 201
    card = Card(running, tokens["c1"])
    await card.start()
    try:
        async with mcp_session(running, "a1", tokens["a1"], []) as s1, \
                mcp_session(running, "a2", tokens["a2"], []) as s2:
            first = asyncio.create_task(s1.call_tool("c1__relay", {}))
            call = await card.next_call()
            hop = await card.post("/v1/calls", {"card": "c1", "call": "agents.prompt",
                                                "target": "a2", "args": {"text": "ask a2"},
                                                "context": call["id"]})
            assert hop["outcome"] == "queued"  # delivered: a2 works in a1's chain
            second = asyncio.create_task(s2.call_tool("c1__relay", {}))
            inner = await card.next_call()
            assert inner["chain"] == ["a1", "c1", "a2", "c1"]
            back = await card.post("/v1/calls", {"card": "c1", "call": "agents.prompt",
                                                 "target": "a1", "args": {"text": "back"},
                                                 "context": inner["id"]})
            assert (back["code"], back["reason"]) == ("LOOP_REFUSED", "cycle")
            await card.post(f"/v1/tool-calls/{inner['id']}/result", {"error": back["message"]})
            refused = await asyncio.wait_for(second, 30)
            assert refused.isError and "LOOP_REFUSED" in _text(refused)
            await card.post(f"/v1/tool-calls/{call['id']}/result", {"result": "ok"})
            assert not (await asyncio.wait_for(first, 30)).isError
    finally:
        await card.close()


async def test_a_prompt_without_context_is_still_stopped_by_the_loop_guard(world: Any) -> None:
    """A card that does not name the tool call in its prompt cannot loop it back (SPEC §9)."""
    running, tokens, _clock = world
    card = Card(running, tokens["c1"])
    await card.start()
    try:
        async with mcp_session(running, "a1", tokens["a1"], []) as session:
            calling = asyncio.create_task(session.call_tool("c1__relay", {}))
            call = await card.next_call()
            back = await card.post("/v1/calls", {"card": "c1", "call": "agents.prompt",
                                                 "target": "a1", "args": {"text": "back"}})
            await card.post(f"/v1/tool-calls/{call['id']}/result", {"result": "done"})
            await asyncio.wait_for(calling, 30)
            assert (back.get("code"), back.get("reason")) == ("LOOP_REFUSED", "cycle")
    finally:
        await card.close()


async def test_a_held_prompt_under_another_open_call_s_chain_returns_every_open_call(
        world: Any) -> None:
    """c1 serves a1's call (through arrowgate mcp) and a2's, newer and as long; its prompt
    to the dangerous y1 naming no context is held carrying a2's chain (the longest, the
    newest). The engine cannot tell which call it serves: a1's call returns at once with
    it too (a tool call never blocks for a person), and prompt_status reports it to a1.

    Found in round 31: a1's tool call waited on, for the card's answer or its timeout,
    while a person was asked about a prompt made in it; prompt_status said no such prompt.
    """
    running, tokens, _clock = world
    op = running.client()
    assert op.post("/v1/workspaces/w1/arrows",
                   json={"id": "e4", "from": "a2", "to": "c1"}).status_code == 201
    a2 = running.client(Path(tokens["a2"]).read_text())
    card = Card(running, tokens["c1"])
    await card.start()
    try:
        async with mcp_session(running, "a1", tokens["a1"], []) as session:
            calling = asyncio.create_task(session.call_tool("c1__relay", {}))
            first = await card.next_call()
            second = a2.post("/v1/tool-calls", json={"agent": "a2", "card": "c1",
                                                     "tool": "relay"}).json()["id"]
            await card.next_call()
            held = await card.post("/v1/calls", {"card": "c1", "call": "agents.prompt",
                                                 "target": "y1", "args": {"text": "deploy"}})
            assert held["outcome"] == "held", held
            ticket = json.loads(_text(await asyncio.wait_for(calling, 10)))
            assert (ticket["tool_call"], ticket["held"]) == (
                first["id"], [{"prompt": held["prompt"], "state": "held", "agent": "y1"}])
            status = await session.call_tool("arrowgate__prompt_status",
                                             {"prompt": held["prompt"]})
            assert not status.isError, _text(status)
            assert json.loads(_text(status))["state"] == "held"
            # a2's call, whose chain the prompt carries, lists it as well
            assert a2.get(f"/v1/tool-calls/{second}").json()["held"][0]["prompt"] == \
                held["prompt"]
            # and a1 follows it to its answer while its call is open
            assert op.post(f"/v1/holds/{held['prompt']}/reject").status_code == 200
            status = await session.call_tool("arrowgate__prompt_status",
                                             {"prompt": held["prompt"]})
            assert json.loads(_text(status))["code"] == "PROMPT_REJECTED", _text(status)
            for call in (first["id"], second):
                await card.post(f"/v1/tool-calls/{call}/result", {"result": "done"})
    finally:
        await card.close()
