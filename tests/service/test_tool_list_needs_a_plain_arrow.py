"""An agent's tool list holds only the tools it may call: those of cards a plain arrow
connects to it (SPEC §1, §9, §10.2).

A port arrow carries data one way between two ports; calling a card's tool is a call
from the agent to the card, which needs a plain arrow (the engine refuses it
``not-connected`` otherwise). (Found by a helper, svc25: the list took every arrow
touching the agent, so a card wired only to its ``reply`` or ``prompt`` port had its
tools listed to the agent — and in ``arrowgate mcp``'s ``tools/list`` — and every
call of them was refused.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .conftest import Running, mint

PKG = {"name": "acme.tools", "version": "1.0.0", "permissions": {}, "tools": ["ping"],
       "ports": {"inputs": ["in"], "outputs": ["out"]}}


def test_a_card_wired_only_by_port_arrows_offers_the_agent_no_tool(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    """Port arrows both ways: no tool listed; a plain arrow drawn: the tool is listed
    and its call opens."""
    # GIVEN card c1 wired to agent a1 only port to port, both ways
    running = serve_at()
    op = running.client()
    (tmp_path / "ws").mkdir()
    for path, body in (
            ("/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "ws")}),
            ("/v1/packages", {"manifest": PKG}),
            ("/v1/packages/acme.tools/install", {"grant": "required"}),
            ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card", "package": "acme.tools"}),
            ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
            ("/v1/workspaces/w1/arrows", {"id": "p1", "from": "a1", "to": "c1",
                                          "from_port": "reply", "to_port": "in"}),
            ("/v1/workspaces/w1/arrows", {"id": "p2", "from": "c1", "to": "a1",
                                          "from_port": "out", "to_port": "prompt"})):
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), r.text
    agent = running.client(mint(op, "agent:a1"))
    call = {"agent": "a1", "card": "c1", "tool": "ping", "args": {}}
    # WHEN the agent lists its tools THEN c1's are not among them, as its call is refused
    assert agent.get("/v1/agents/a1/tools").json() == []
    refused = agent.post("/v1/tool-calls", json=call).json()
    assert (refused["state"], refused["decision"]["reason"]) == ("refused", "not-connected")
    # WHEN a person draws a plain arrow THEN the tool is listed, and its call opens
    r = op.post("/v1/workspaces/w1/arrows", json={"id": "e1", "from": "c1", "to": "a1"})
    assert r.status_code == 201, r.text
    assert [t["name"] for t in agent.get("/v1/agents/a1/tools").json()] == ["c1__ping"]
    assert agent.post("/v1/tool-calls", json=call).json()["state"] == "open"
