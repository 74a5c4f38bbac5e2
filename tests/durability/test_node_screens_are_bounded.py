"""A driverless agent's or terminal's screen keeps only its last SCREEN_KEPT bytes.

Without a driver, an agent or terminal is simulated in the store: what is
typed into it, the prompts it gets, its replies and its output are added to
its ``screen`` in the node's data. A screen is what a person would see, not
a transcript: it keeps its end, within `SCREEN_KEPT` bytes, so that no card
exhausts the store through it (SPEC §8: each write is within max_payload,
but 60 writes a minute were kept for good, and every one rewrote them all).

(Found in round 20: a card's terminals.write calls piled up in the
terminal's node data without bound.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install

#: `engine.effects.world.SCREEN_KEPT`.
SCREEN_KEPT = 64 * 1024


async def _wired(make_engine: Any, tmp_path: Path) -> Any:
    engine = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.ops", {"terminals.write": {},
                                                      "agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.ops"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a1"})
    return engine


async def test_a_terminals_screen_keeps_its_end(make_engine: Any, tmp_path: Path) -> None:
    engine = await _wired(make_engine, tmp_path)
    chunk = 100_000
    for i in range(4):
        decision = await engine.call("c1", "terminals.write", "t1",
                                     {"data": f"[{i}]" + "x" * chunk})
        assert decision.outcome == "ok"
    await engine.terminal_output("t1", "é" * chunk + "the end")
    engine.close()
    again = make_engine()
    screen = again.state.canvas.node("t1").data["screen"]
    assert len(screen.encode()) <= SCREEN_KEPT
    assert screen.endswith("the end")
    assert screen.startswith("é")  # cut at a character's boundary


async def test_an_agents_screen_keeps_its_end(make_engine: Any, tmp_path: Path) -> None:
    engine = await _wired(make_engine, tmp_path)
    for i in range(4):
        decision = await engine.call("c1", "agents.prompt", "a1", {"text": f"task {i}"})
        assert decision.outcome == "queued"
        await engine.agent_replied("a1", f"reply {i} " + "y" * 30_000)
    screen = engine.state.canvas.node("a1").data["screen"]
    assert len(screen.encode()) <= SCREEN_KEPT
    assert screen.rstrip().endswith("y")
    assert "> task 3" in screen
