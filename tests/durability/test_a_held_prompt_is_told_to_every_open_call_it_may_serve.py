"""A tool call never blocks for a person (SPEC §10.2): the held prompts a tool call is
told of (`Engine.tool_call_holds`, the ``held`` of ``GET /v1/tool-calls/{id}``, what
ends ``arrowgate mcp``'s wait) are those any card of its card's package on the canvas
made since it opened. The engine cannot tell which open call a prompt serves when it
names none (it carries the longest chain, SPEC §9), nor which card of the package does
the work (the loop guard holds them together): telling each open call is what keeps
every agent waiting on one from waiting on a person. On SQLite and PostgreSQL, and
across a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install


async def _canvas(make_engine: Any, tmp_path: Path) -> Engine:
    """c1 and c2 (acme.relay) and d1 (acme.other); agents a1, a2 wired to c1, the
    dangerous y1 to every card."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.relay", {"agents.prompt": {}}, tools=["relay"]))
    await offer_install(engine, manifest("acme.other", {"agents.prompt": {}}))
    for card, package in (("c1", "acme.relay"), ("c2", "acme.relay"), ("d1", "acme.other")):
        await engine.add_node({"id": card, "type": "card", "package": package}, workspace="w1")
    for agent in ("a1", "a2", "y1"):
        await engine.add_node({"id": agent, "type": "agent", "dangerous": agent == "y1"},
                              workspace="w1")
    for agent in ("a1", "a2"):
        await engine.add_arrow({"id": f"e-{agent}", "from": agent, "to": "c1"})
    for card in ("c1", "c2", "d1"):
        await engine.add_arrow({"id": f"y-{card}", "from": card, "to": "y1"})
    return engine


def _held(engine: Engine, call: str) -> list[str]:
    """The held prompts tool call ``call`` is told of."""
    tc = engine.tool_call(call)
    assert tc is not None and tc.is_open
    return [p.id for p in engine.tool_call_holds(tc)]


async def test_a_held_prompt_naming_no_context_is_told_to_every_open_call(
        make_engine: Any, tmp_path: Path) -> None:
    # GIVEN a1's call k1 and a2's call k2 to c1, as long, k2 the newer
    engine = await _canvas(make_engine, tmp_path)
    k1 = (await engine.tool("a1", "c1", "relay")).value["id"]
    k2 = (await engine.tool("a2", "c1", "relay")).value["id"]
    # WHEN c1 prompts y1 naming no context, c2 prompts y1, and d1 prompts y1
    own = await engine.call("c1", "agents.prompt", "y1", {"text": "deploy"})
    sibling = await engine.call("c2", "agents.prompt", "y1", {"text": "and ship"})
    other = await engine.call("d1", "agents.prompt", "y1", {"text": "unrelated"})
    assert [d.outcome for d in (own, sibling, other)] == ["held"] * 3
    # THEN c1's carries k2's chain, and both calls are told of c1's and c2's holds
    assert engine.log_rows(arrow="y-c1")[-1]["chain"] == ["a2", "c1", "y1"]
    assert _held(engine, k1) == _held(engine, k2) == [own.prompt, sibling.prompt]
    # AND after a restart, as before
    engine.close()
    engine = make_engine()
    assert _held(engine, k1) == _held(engine, k2) == [own.prompt, sibling.prompt]
