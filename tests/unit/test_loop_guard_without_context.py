"""The loop guard does not depend on the card naming its context (SPEC §9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install


async def _relay(make_engine: Any, tmp_path: Path) -> Engine:
    """Card c1 offers a tool and may prompt; agents a1, a2, a3 are all wired to it."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.relay", {"agents.prompt": {}}, tools=["relay"],
                                         ports={"inputs": [], "outputs": ["out"]}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    for agent in ("a1", "a2", "a3"):
        await engine.add_node({"id": agent, "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": f"e-{agent}", "from": "c1", "to": agent})
    return engine


async def test_a_prompt_without_context_carries_the_open_tool_call_s_chain(
        make_engine: Any, tmp_path: Path) -> None:
    """a1 calls c1's tool; c1 prompting a1 back without naming the call is a cycle."""
    engine = await _relay(make_engine, tmp_path)
    assert (await engine.tool("a1", "c1", "relay")).allowed
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "loop back"})
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle")
    assert engine.log_rows(arrow="e-a1")[-1]["chain"] == ["a1", "c1"]
    d = await engine.call("c1", "agents.prompt", "a2", {"text": "onwards"})
    assert d.outcome == "queued"
    assert engine.log_rows(arrow="e-a2")[-1]["chain"] == ["a1", "c1", "a2"]


async def test_every_open_chain_is_checked_and_the_longest_is_logged(
        make_engine: Any, tmp_path: Path) -> None:
    """With two tool calls open, a prompt any chain would refuse is refused; the longest is kept."""
    engine = await _relay(make_engine, tmp_path)
    k1 = (await engine.tool("a1", "c1", "relay")).value["id"]
    assert (await engine.call("c1", "agents.prompt", "a2", {"text": "hop 1"},
                              context=k1)).outcome == "queued"
    assert engine.state.canvas.node("a2").data.get("chain") == ["a1", "c1", "a2"]
    assert (await engine.tool("a2", "c1", "relay")).allowed  # chain a1 c1 a2 c1
    # a2 is in the longer chain only: refused all the same.
    d = await engine.call("c1", "agents.prompt", "a2", {"text": "again"})
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle")
    assert engine.log_rows(arrow="e-a2")[-1]["chain"] == ["a1", "c1", "a2", "c1"]
    d = await engine.call("c1", "agents.prompt", "a3", {"text": "fine"})
    assert d.outcome == "queued"
    assert engine.log_rows(arrow="e-a3")[-1]["chain"] == ["a1", "c1", "a2", "c1", "a3"]
    # The hop limit counts along every chain: 1 hop along a1 c1 a3, 2 along the longest.
    await engine.set_settings("w1", {"hop_limit": 1})
    d = await engine.call("c1", "agents.prompt", "a3", {"text": "too far"})
    assert (d.code, d.reason) == ("LOOP_REFUSED", "hop-limit")


async def test_port_prompts_without_context_are_checked_too(make_engine: Any,
                                                          tmp_path: Path) -> None:
    """Data on a port arrow into an agent's prompt port follows the same rule."""
    engine = await _relay(make_engine, tmp_path)
    await engine.add_arrow({"id": "p1", "from": "c1", "from_port": "out", "to": "a1",
                            "to_port": "prompt"})
    assert (await engine.tool("a1", "c1", "relay")).allowed
    out = await engine.emit("c1", "out", "via the port")
    assert (out["p1"].code, out["p1"].reason) == ("LOOP_REFUSED", "cycle")
    # A context that is not the card's own does not switch the rule off: it is refused
    # outright, as a call's is (INVALID_ARGUMENT, reason context), and nothing travels.
    out = await engine.emit("c1", "out", "via the port", context="k999")
    assert list(out) == [""] and (out[""].code, out[""].reason) == ("INVALID_ARGUMENT",
                                                                    "context")


async def test_a_timed_out_tool_call_is_no_longer_open(make_engine: Any, tmp_path: Path,
                                                       clock: VirtualClock) -> None:
    """Once the tool timeout has passed, prompts without a context start a new chain."""
    engine = await _relay(make_engine, tmp_path)
    assert (await engine.tool("a1", "c1", "relay")).allowed
    clock.t += 119
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "x"})).code == "LOOP_REFUSED"
    clock.t += 1.5
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "x"})).outcome == "queued"
