"""Two cards whose ids are rewritten for agent clients never share a tool name (SPEC §10.2).

(Found by a helper, svc26: a card id no client takes in a tool name is written with a
tag of 8 hexadecimal digits of a SHA-256 (`engine.core.toolnames`); 32 bits, so two ids
written alike with the same tag are found in a second (a birthday search over
ids of ``äöüé``: the two below). Placed beside a card of the agent's, such a card made
both cards' tools share a name, and the lister, which leaves out a name two tools
share, hid the other card's tool from the agent: a hostile card id took a tool away.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from engine.app.mcp import _split
from engine.core.toolnames import CLIENT_NAME, agent_tool_name

from .conftest import Running, mint

#: Two ids rewritten alike (``------------``) whose 8-digit tags for ``search`` agreed.
TWINS = ("äääöäüüéöüöü", "äääööéüääüää")
#: A tool's name (SPEC §2).
TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
PKG = {"name": "acme.search", "version": "1.0.0", "permissions": {}, "tools": ["search"]}


def test_cards_whose_ids_rewrite_alike_each_keep_their_tool(serve_at: Callable[..., Running],
                                                           tmp_path: Path) -> None:
    running = serve_at()
    op = running.client()
    (tmp_path / "ws").mkdir()
    for path, body in (
            ("/v1/workspaces", {"id": "w1", "folder": str(tmp_path / "ws")}),
            ("/v1/packages", {"manifest": PKG}),
            ("/v1/packages/acme.search/install", {"grant": "required"}),
            *(("/v1/workspaces/w1/nodes", {"id": card, "type": "card", "package": "acme.search"})
              for card in TWINS),
            ("/v1/workspaces/w1/nodes", {"id": "a1", "type": "agent"}),
            *(("/v1/workspaces/w1/arrows", {"id": f"e{i}", "from": "a1", "to": card})
              for i, card in enumerate(TWINS))):
        r = op.post(path, json=body)
        assert r.status_code in (200, 201), r.text
    agent = running.client(mint(op, "agent:a1"))
    tools = agent.get("/v1/agents/a1/tools").json()
    assert sorted((t["card"], t["tool"]) for t in tools) == sorted(
        (card, "search") for card in TWINS), tools
    names = [t["name"] for t in tools]
    assert len(set(names)) == 2 and all(CLIENT_NAME.fullmatch(n) for n in names), names


def test_a_rewritten_name_is_never_another_tools_plain_name_nor_reads_as_one() -> None:
    """A rewritten name ends in ``-`` and hexadecimal digits, which no ``<card>__<tool>``
    name does (a tool's name holds no ``-``), and read back as ``<card>__<tool>`` (what
    ``arrowgate mcp`` does with a name no list gave) it names no tool the engine has."""
    for card in (*TWINS, "my card", "c1.self1", "x" * 100, "é__search", "a__b-c d"):
        name = agent_tool_name(card, "search")
        assert CLIENT_NAME.fullmatch(name), name
        assert name != f"{card}__search"
        read = _split(name)
        assert read is None or not TOOL_NAME.fullmatch(read[1]), (card, name, read)
