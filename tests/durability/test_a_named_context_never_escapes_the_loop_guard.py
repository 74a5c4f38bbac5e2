"""The loop guard does not depend on the card's honesty (SPEC §9), even when the card
names a context: a prompt naming one of the card's open tool calls is checked against
the chain of every tool call the card has open, and refused if any would refuse it.
It carries, and is logged with, the chain of the call it names. On SQLite and
PostgreSQL, and across a restart.

Found in round 26 ("the loop guard trusts a card naming its own open tool call"): a
card serving a1's call and a2's call named a2's while prompting a1 — which a1's open
call would refuse as a cycle, and which the card prompting without a context was
refused — and the prompt was queued for a1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install


async def _relay(make_engine: Any, tmp_path: Path) -> Engine:
    """Card c1 offers a tool and may prompt (through a method or its ``out`` port);
    agents a1..a4 are each wired to it by a plain arrow."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.relay", {"agents.prompt": {}}, tools=["relay"],
                                         ports={"inputs": [], "outputs": ["out"]}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    for agent in ("a1", "a2", "a3", "a4"):
        await engine.add_node({"id": agent, "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": f"e-{agent}", "from": "c1", "to": agent})
    return engine


async def test_naming_one_open_call_does_not_escape_a_cycle_another_gives(
        make_engine: Any, tmp_path: Path) -> None:
    """a1 and a2 each wait on a call to c1; c1 naming a2's call to prompt a1 is a cycle."""
    # GIVEN two open tool calls of c1, from a1 (k1) and from a2 (k2)
    engine = await _relay(make_engine, tmp_path)
    k1 = (await engine.tool("a1", "c1", "relay")).value["id"]
    k2 = (await engine.tool("a2", "c1", "relay")).value["id"]
    # WHEN c1 prompts a1 naming k2 (whose chain a2 → c1 does not hold a1)
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "back to a1"}, context=k2)
    # THEN it is refused, as without a context: a1 waits on k1, whose chain holds it
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle")
    row = engine.log_rows(arrow="e-a1")[-1]
    assert (row["outcome"], row["code"], row["chain"]) == ("denied", "LOOP_REFUSED",
                                                           ["a2", "c1"])
    assert engine.state.open_prompts.held() == [] and not engine.log_rows(outcome="queued")
    # AND naming k1 to prompt a2 is the same cycle, the other way round
    d = await engine.call("c1", "agents.prompt", "a2", {"text": "to a2"}, context=k1)
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle")
    # AND a prompt no open chain refuses carries the chain of the call it names
    d = await engine.call("c1", "agents.prompt", "a3", {"text": "onwards"}, context=k1)
    assert d.outcome == "queued"
    assert engine.log_rows(arrow="e-a3")[-1]["chain"] == ["a1", "c1", "a3"]
    # AND after a restart the open calls are still checked, whichever is named
    engine.close()
    engine = make_engine()
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "again"}, context=k2)
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle")
    d = await engine.call("c1", "agents.prompt", "a4", {"text": "onwards"}, context=k2)
    assert d.outcome == "queued"
    assert engine.log_rows(arrow="e-a4")[-1]["chain"] == ["a2", "c1", "a4"]


async def test_naming_a_short_chain_does_not_escape_the_hop_limit_of_a_long_one(
        make_engine: Any, tmp_path: Path) -> None:
    """With a two-hop call open, naming a fresh call does not make a prompt one hop."""
    # GIVEN a hop limit of 1, a1's call k1 through which c1 prompted a2 (1 hop), a2's
    # call k2 made in that chain, and a fresh call k3 of a3
    engine = await _relay(make_engine, tmp_path)
    await engine.set_settings("w1", {"hop_limit": 1})
    k1 = (await engine.tool("a1", "c1", "relay")).value["id"]
    assert (await engine.call("c1", "agents.prompt", "a2", {"text": "hop 1"},
                              context=k1)).outcome == "queued"
    assert (await engine.tool("a2", "c1", "relay")).allowed  # chain a1 c1 a2 c1
    k3 = (await engine.tool("a3", "c1", "relay")).value["id"]
    # WHEN c1 prompts a4 naming k3 (one hop along a3 → c1, two along k2's chain)
    d = await engine.call("c1", "agents.prompt", "a4", {"text": "far"}, context=k3)
    # THEN the hop limit k2's chain gives refuses it
    assert (d.code, d.reason) == ("LOOP_REFUSED", "hop-limit")
    assert engine.log_rows(arrow="e-a4")[-1]["chain"] == ["a3", "c1"]


async def test_port_data_naming_a_context_is_checked_against_every_open_call(
        make_engine: Any, tmp_path: Path) -> None:
    """Data on a port arrow into an agent's prompt port follows the same rule."""
    engine = await _relay(make_engine, tmp_path)
    await engine.add_arrow({"id": "p1", "from": "c1", "from_port": "out", "to": "a1",
                            "to_port": "prompt"})
    assert (await engine.tool("a1", "c1", "relay")).allowed
    k2 = (await engine.tool("a2", "c1", "relay")).value["id"]
    out = await engine.emit("c1", "out", "via the port", context=k2)
    assert (out["p1"].code, out["p1"].reason) == ("LOOP_REFUSED", "cycle")
    assert engine.log_rows(arrow="p1")[-1]["chain"] == ["a2", "c1"]
