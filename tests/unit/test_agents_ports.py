"""Tools, causal chains and the loop guard (SPEC §9); port data (SPEC §1)."""

from __future__ import annotations

from engine import Engine

from ..conftest import manifest, offer_install


async def test_tool_needs_arrow_then_declared_tool(world: Engine) -> None:
    """not-connected comes before UNKNOWN_TOOL."""
    assert (await world.tool("a2", "c1", "nope")).reason == "not-connected"
    assert (await world.tool("a1", "c1", "nope")).code == "UNKNOWN_TOOL"
    d = await world.tool("a1", "c1", "relay")
    assert d.outcome == "ok" and d.value == {"id": d.value["id"], "state": "open"}


async def test_chain_is_kept_by_the_engine_and_hops_are_limited(make_engine, tmp_path,
                                                                 clock) -> None:
    """a1→c1→a2→c2→a3 is 2 hops; with hop_limit 1 the second hop is refused."""
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path, settings={"hop_limit": 1})
    await offer_install(engine, manifest("acme.relay", {"agents.prompt": {}}, tools=["relay"]))
    for n in ("c1", "c2"):
        await engine.add_node({"id": n, "type": "card", "package": "acme.relay"}, workspace="w1")
    for n in ("a1", "a2", "a3"):
        await engine.add_node({"id": n, "type": "agent"}, workspace="w1")
    for i, (a, b) in enumerate((("a1", "c1"), ("c1", "a2"), ("a2", "c2"), ("c2", "a3"))):
        await engine.add_arrow({"id": f"e{i}", "from": a, "to": b})
    k1 = (await engine.tool("a1", "c1", "relay")).value["id"]
    first = await engine.call("c1", "agents.prompt", "a2", {"text": "hop 1"}, context=k1)
    assert first.outcome == "queued"
    assert engine.log_rows(arrow="e1")[-1]["chain"] == ["a1", "c1", "a2"]
    k2 = (await engine.tool("a2", "c2", "relay")).value["id"]
    second = await engine.call("c2", "agents.prompt", "a3", {"text": "hop 2"}, context=k2)
    assert (second.code, second.reason) == ("LOOP_REFUSED", "hop-limit")
    # A card cannot borrow another card's tool call.
    d = await engine.call("c2", "agents.prompt", "a3", {"text": "x"}, context=k1)
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "context")
    # Leaving out the context while k2 is open does not escape its chain (SPEC §9) ...
    d = await engine.call("c2", "agents.prompt", "a3", {"text": "no context"})
    assert (d.code, d.reason) == ("LOOP_REFUSED", "hop-limit")
    # ... but once no tool call is open (they time out), a prompt starts a new chain at 1.
    clock.t += 121
    assert (await engine.call("c2", "agents.prompt", "a3", {"text": "fresh"})).outcome == "queued"


async def test_port_data_travels_each_port_arrow(world: Engine) -> None:
    """Data on an output port reaches every port arrow from it, each decided on its own."""
    await world.add_arrow({"id": "p1", "from": "c1", "from_port": "out", "to": "a2",
                           "to_port": "prompt"})
    await world.add_arrow({"id": "p2", "from": "c1", "from_port": "out", "to": "t1",
                           "to_port": "command"})
    out = await world.emit("c1", "out", "ls")
    assert {k: d.outcome for k, d in out.items()} == {"p1": "queued", "p2": "ok"}
    assert world.state.canvas.node("t1").data["screen"] == "$ ls\n"
    bad = await world.emit("c1", "nope", "x")
    assert bad[""].reason == "port"
