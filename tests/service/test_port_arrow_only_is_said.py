"""A refusal for want of a plain arrow says so when a port arrow is all that connects the two.

(Found by a helper, svc26: a card that called ``agents.prompt`` on an agent wired to it
only port to port, or an agent that called such a card's tool, was told "no arrow
connects c1 and a1" — untrue on a canvas that shows an arrow between them, and no help
to a person looking at it. A refusal's explanation must say what is really missing,
SPEC §9: a port arrow carries port data one way, a call needs a plain arrow, SPEC §1.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from .conftest import Running, mint

PKG = {"name": "acme.tools", "version": "1.0.0", "permissions": {"agents.prompt": {}},
       "tools": ["ping"], "ports": {"inputs": ["in"], "outputs": ["out"]}}


def _canvas(running: Running, folder: Path) -> httpx.Client:
    """Card c1 and agent a1 wired port to port only (p1, p2); card c2 and agent a2 not
    wired at all."""
    op = running.client()
    folder.mkdir()
    for path, body in (
            ("/v1/workspaces", {"id": "w1", "folder": str(folder)}),
            ("/v1/packages", {"manifest": PKG}),
            ("/v1/packages/acme.tools/install", {"grant": "required"}),
            ("/v1/workspaces/w1/nodes", {"id": "c1", "type": "card", "package": "acme.tools"}),
            ("/v1/workspaces/w1/nodes", {"id": "c2", "type": "card", "package": "acme.tools"}),
            ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
            ("/v1/workspaces/w1/nodes", {"id": "a2", "type": "agent"}),
            ("/v1/workspaces/w1/arrows", {"id": "p1", "from": "a1", "to": "c1",
                                          "from_port": "reply", "to_port": "in"}),
            ("/v1/workspaces/w1/arrows", {"id": "p2", "from": "c1", "to": "a1",
                                          "from_port": "out", "to_port": "prompt"})):
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), r.text
    return op


def test_a_cards_call_over_only_a_port_arrow_says_a_port_arrow_is_all_there_is(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    op = _canvas(running, tmp_path / "ws")
    card = running.client(mint(op, "card:c1"))
    d = card.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "a1",
                                     "args": {"text": "hi"}}).json()
    assert (d["outcome"], d["reason"]) == ("denied", "not-connected"), d
    assert "no arrow connects" not in d["message"], d["message"]
    assert "only a port arrow connects c1 and a1" in d["message"], d["message"]
    assert "plain arrow" in d["message"], d["message"]
    # Where nothing connects them, that is what is said.
    other = running.client(mint(op, "card:c2"))
    d = other.post("/v1/calls", json={"card": "c2", "call": "agents.prompt", "target": "a2",
                                      "args": {"text": "hi"}}).json()
    assert "no arrow connects c2 and a2" in d["message"], d["message"]


def test_an_agents_tool_call_over_only_a_port_arrow_says_a_port_arrow_is_all_there_is(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    op = _canvas(running, tmp_path / "ws")
    agent = running.client(mint(op, "agent:a1"))
    out = agent.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "ping",
                                             "args": {}}).json()
    d = out["decision"]
    assert (out["state"], d["reason"]) == ("refused", "not-connected"), out
    assert "no arrow connects" not in d["message"], d["message"]
    assert "only a port arrow connects a1 and c1" in d["message"], d["message"]
    assert "plain arrow" in d["message"], d["message"]


def test_a_tool_call_cancelled_as_its_plain_arrow_goes_says_only_a_port_arrow_is_left(
        serve_at: Callable[..., Running], tmp_path: Path) -> None:
    running = serve_at()
    op = _canvas(running, tmp_path / "ws")
    assert op.post("/v1/workspaces/w1/arrows",
                   json={"id": "e1", "from": "a1", "to": "c1"}).status_code == 201
    agent = running.client(mint(op, "agent:a1"))
    opened = agent.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "ping",
                                                "args": {}}).json()
    assert opened["state"] == "open", opened
    assert op.delete("/v1/arrows/e1").status_code in (200, 204)
    call = agent.get(f"/v1/tool-calls/{opened['id']}").json()
    assert call["state"] == "cancelled", call
    said = str(call)
    assert "no arrow connects" not in said and "only a port arrow connects a1 and c1" in said, \
        call
