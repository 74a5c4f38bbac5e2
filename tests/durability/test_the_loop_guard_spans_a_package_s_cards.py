"""The loop guard does not depend on the card's honesty (SPEC §9), nor on which of its
package's cards makes the prompt: a card's copy (``canvas.spawn`` kind ``self``) or a
second card of the package on the canvas runs the same code as the card whose tool
call is open, and can be told out of band to prompt for it. A prompt a card of the
package makes is checked against the chain of every open tool call of every card of
its package on its canvas, and carries the longest (README: decisions). On SQLite and
PostgreSQL, and across a restart.

Found in round 31 ("the loop guard is per card"): c1, serving a1's tool call, spawned a
copy; with an arrow from the copy to a1 (drawn by the person, who sees a copy of a card
they already wired to a1), the copy prompted a1 and the prompt was queued, a1 → c1 →
a1 with a1's call still open.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install

RELAY = manifest("acme.relay", {"agents.prompt": {}, "canvas.spawn": {}}, tools=["relay"],
                 ports={"inputs": [], "outputs": ["out"]})
OTHER = manifest("acme.other", {"agents.prompt": {}})


async def _canvas(make_engine: Any, tmp_path: Path) -> tuple[Engine, str]:
    """c1 (acme.relay) wired to agents a1..a3; its copy, a second card c2 of the package
    and d1 of another package, each wired to a1..a3 by the person; the copy also by
    its ``out`` port into a1's prompt port. Returns the engine and the copy's id."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, RELAY)
    await offer_install(engine, OTHER)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    copy = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    assert isinstance(copy, str)
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.relay"}, workspace="w1")
    await engine.add_node({"id": "d1", "type": "card", "package": "acme.other"}, workspace="w1")
    for agent in ("a1", "a2", "a3"):
        await engine.add_node({"id": agent, "type": "agent"}, workspace="w1")
        for card in ("c1", copy, "c2", "d1"):
            await engine.add_arrow({"id": f"e-{card}-{agent}", "from": card, "to": agent})
    await engine.add_arrow({"id": "p-copy", "from": copy, "from_port": "out", "to": "a1",
                            "to_port": "prompt"})
    return engine, copy


async def test_a_copy_prompting_the_agent_its_spawner_serves_is_a_cycle(
        make_engine: Any, tmp_path: Path) -> None:
    """a1 waits on c1's tool call: c1's copy prompting a1, by method or port, is refused."""
    # GIVEN a1's open tool call to c1, and c1's copy wired to a1
    engine, copy = await _canvas(make_engine, tmp_path)
    assert (await engine.tool("a1", "c1", "relay")).allowed
    # WHEN the copy prompts a1, naming no context (it has no tool call of its own)
    d = await engine.call(copy, "agents.prompt", "a1", {"text": "back to a1"})
    # THEN it is a cycle of c1's open call, logged with that call's chain
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle"), d
    row = engine.log_rows(arrow=f"e-{copy}-a1")[-1]
    assert (row["outcome"], row["card"], row["chain"]) == ("denied", copy, ["a1", "c1"])
    # AND its port data into a1's prompt port is refused the same way
    out = await engine.emit(copy, "out", "by the port")
    assert (out["p-copy"].code, out["p-copy"].reason) == ("LOOP_REFUSED", "cycle")
    # AND nothing reached a1
    assert not engine.log_rows(outcome="queued")
    # AND a prompt onwards to a2 carries c1's open chain, as c1's own would
    d = await engine.call(copy, "agents.prompt", "a2", {"text": "onwards"})
    assert d.outcome == "queued", d
    assert engine.log_rows(arrow=f"e-{copy}-a2")[-1]["chain"] == ["a1", "c1", "a2"]


async def test_a_second_card_of_the_package_is_held_to_every_open_chain(
        make_engine: Any, tmp_path: Path) -> None:
    """c2, placed by the person, shares c1's open chains; a card of another package not."""
    # GIVEN a1's call to c1, through which c1 prompted a2, and a2's call to c1 in that
    # chain (a1 c1 a2 c1)
    engine, _copy = await _canvas(make_engine, tmp_path)
    k1 = (await engine.tool("a1", "c1", "relay")).value["id"]
    assert (await engine.call("c1", "agents.prompt", "a2", {"text": "hop 1"},
                              context=k1)).outcome == "queued"
    assert (await engine.tool("a2", "c1", "relay")).allowed
    # WHEN c2 prompts a1 or a2
    for agent in ("a1", "a2"):
        d = await engine.call("c2", "agents.prompt", agent, {"text": "loop"})
        # THEN each is a cycle, logged with the longest open chain
        assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle"), d
        assert engine.log_rows(arrow=f"e-c2-{agent}")[-1]["chain"] == ["a1", "c1", "a2", "c1"]
    # AND a card of another package is not held to acme.relay's calls
    assert (await engine.call("d1", "agents.prompt", "a1", {"text": "mine"})).outcome == "queued"
    # AND the hop limit counts along the package's longest chain: 2 hops to a3 there
    await engine.set_settings("w1", {"hop_limit": 1})
    d = await engine.call("c2", "agents.prompt", "a3", {"text": "too far"})
    assert (d.code, d.reason) == ("LOOP_REFUSED", "hop-limit"), d
    # AND after a restart the open calls still hold the package's other cards
    engine.close()
    engine = make_engine()
    d = await engine.call("c2", "agents.prompt", "a1", {"text": "again"})
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle"), d
    await engine.set_settings("w1", {"hop_limit": 3})
    d = await engine.call("c2", "agents.prompt", "a3", {"text": "onwards"})
    assert d.outcome == "queued", d
    assert engine.log_rows(arrow="e-c2-a3")[-1]["chain"] == ["a1", "c1", "a2", "c1", "a3"]
