"""Every tool name an agent is given fits the names its client and model API take:
``[A-Za-z0-9_-]``, at most 64 characters (SPEC §10.2).

A node id is free printable text, and the engine names a card's own copy
``<card>.self<n>`` (``canvas.spawn``). (Found by a helper, svc25: ``<card>__<tool>``
was listed as it is, ``c1.self1__search`` or ``my card__search``; Codex's and Claude's
APIs refuse a tool name outside ``^[a-zA-Z0-9_-]{1,64}$`` (or 128) with a 400 for the
whole request, so one such card connected to an agent stopped the agent from working at
all, not only from calling that tool.)
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

from .conftest import Running, mint
from .test_mcp import Card, mcp_session

#: What Codex, the Claude API and Claude Desktop take (the strictest of them).
CLIENT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

PKG = {"name": "acme.search", "version": "1.0.0", "permissions": {"canvas.spawn": {}},
       "tools": ["search", "long_" + "x" * 59]}
LONG = "standup-" + "x" * 100


def _canvas(running: Running, folder: Path, tmp: Path) -> tuple[str, str]:
    """c1 spawns its copy c1.self1; the copy, ``my card`` and a card with a long id are
    connected to agent a1. Returns a1's token file and the copy's card token."""
    op = running.client()
    folder.mkdir()
    for path, body in (
            ("/v1/workspaces", {"id": "w1", "folder": str(folder)}),
            ("/v1/packages", {"manifest": PKG}),
            ("/v1/packages/acme.search/install", {"grant": "required"}),
            ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card", "package": "acme.search"}),
            ("/v1/workspaces/w1/nodes", {"id": "my card", "type": "card",
                                         "package": "acme.search"}),
            ("/v1/workspaces/w1/nodes", {"id": LONG, "type": "card", "package": "acme.search"}),
            ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"})):
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), r.text
    spawned = op.post("/v1/calls", json={"card": "c1", "call": "canvas.spawn",
                                         "args": {"kind": "self"}}).json()
    assert spawned["value"] == "c1.self1", spawned
    for i, card in enumerate(("c1.self1", "my card", LONG)):
        r = op.post("/v1/workspaces/w1/arrows", json={"id": f"e{i}", "from": "a1", "to": card})
        assert r.status_code == 201, r.text
    token_file = tmp / "a1.token"
    token_file.write_text(mint(op, "agent:a1"))
    token_file.chmod(0o600)
    return str(token_file), mint(op, "card:c1.self1")


async def test_tool_names_fit_agent_clients_and_still_reach_their_card(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """Cards whose ids no client takes in a tool name: their tools are named so one does,
    and a call by that name reaches the card."""
    # GIVEN the engine's own copy c1.self1, a card "my card" and one with a long id
    running = serve_at()
    token_file, copy_token = _canvas(running, tmp_path / "ws", tmp_path)
    agent = running.client(Path(token_file).read_text())
    # WHEN the agent lists its tools
    tools = agent.get("/v1/agents/a1/tools").json()
    # THEN each card's tools are there, each named as its clients take names
    assert sorted({(t["card"], t["tool"]) for t in tools}) == sorted(
        (card, tool) for card in ("c1.self1", "my card", LONG) for tool in PKG["tools"])
    bad = [t["name"] for t in tools if not CLIENT_NAME.fullmatch(t["name"])]
    assert bad == [], f"names no agent client takes: {bad}"
    assert len({t["name"] for t in tools}) == len(tools)
    # AND through arrowgate mcp, a call by the listed name reaches the card it names
    card = Card(running, copy_token)
    await card.start()
    try:
        async with mcp_session(running, "a1", token_file, []) as session:
            listed = (await session.list_tools()).tools
            assert all(CLIENT_NAME.fullmatch(t.name) for t in listed), [t.name for t in listed]
            name = next(t["name"] for t in tools if (t["card"], t["tool"]) == ("c1.self1",
                                                                               "search"))
            task = asyncio.ensure_future(session.call_tool(name, {}))
            call = await card.next_call()
            assert (call["agent"], call["tool"]) == ("a1", "search")
            await card.post(f"/v1/tool-calls/{call['id']}/result", {"result": "found"})
            result = await asyncio.wait_for(task, 30)
            assert not result.isError
    finally:
        await card.close()
