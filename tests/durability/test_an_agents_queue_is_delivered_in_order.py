"""SPEC §6: "A prompt that passes is queued on its arrow for the agent and delivered in
order when the agent is ``waiting``" — one queue per agent, whichever card, arrow or way
(the method or the ``prompt`` port) each prompt came by, one at a time, its order kept
across a restart. On both stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install


async def _canvas(engine: Engine, folder: Path) -> None:
    """Cards c1 (arrow e1 to a1) and c2 (a plain arrow from a1, a port arrow p2 into a1's
    prompt port) and a working agent a1."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}},
                                         ports={"inputs": [], "outputs": ["o"]}))
    for card in ("c1", "c2"):
        await engine.add_node({"id": card, "type": "card", "package": "acme.p"},
                              workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "status": "working"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "a1", "to": "c2"})
    await engine.add_arrow({"id": "p2", "from": "c2", "from_port": "o", "to": "a1",
                            "to_port": "prompt"})


async def test_prompts_of_every_card_and_way_are_delivered_in_the_order_they_came(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Six prompts by two cards, two arrows and a port, interleaved: queued while a1
    works, then delivered one a turn in the order they came, half before a restart and
    half after."""
    # GIVEN a working agent and two cards prompting it by three ways, interleaved
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    sent = []
    for i in range(6):
        clock.t += 1.0
        text = f"prompt {i}"
        if i % 3 == 0:
            d = (await engine.emit("c2", "o", text))["p2"]
        elif i % 3 == 1:
            d = await engine.call("c2", "agents.prompt", "a1", {"text": text})
        else:
            d = await engine.call("c1", "agents.prompt", "a1", {"text": text})
        assert d.outcome == "queued" and d.prompt is not None, d
        sent.append((text, d.arrow))
    assert [a for _, a in sent] == ["p2", "e2", "e1"] * 2
    # WHEN the agent waits, then ends a turn after each prompt, a restart half way
    delivered = []
    await engine.set_node("a1", {"status": "waiting"})
    for turn in range(6):
        if turn == 3:
            engine.close()
            engine = make_engine()
        now = [p for p in engine.prompts() if p.state == "delivered"]
        # THEN one is delivered at a time, the oldest still queued
        assert len(now) == 1, [(p.text, p.state) for p in engine.prompts()]
        delivered.append((now[0].text, now[0].arrow))
        await engine.agent_replied("a1", f"reply {turn}")
    assert delivered == sent
    assert {p.state for p in engine.prompts()} == {"replied"}
