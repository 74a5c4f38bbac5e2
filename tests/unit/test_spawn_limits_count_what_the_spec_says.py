"""SPEC §6's spawn row: the workspace card cap counts every node on the canvas (agents and
terminals too, not only cards), and a spawn refused ``CARD_LIMIT`` (either cap) is not
counted in the spawn window (SPEC §5: refused calls never count).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install


async def test_the_card_cap_counts_agents_and_terminals(
        make_engine: Any, tmp_path: Path) -> None:
    """A cap of 3 held by a card, an agent and a terminal leaves no room for a spawn."""
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path, settings={"card_cap": 3})
    await offer_install(engine, manifest("acme.s", {"canvas.spawn": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    d = await engine.call("c1", "canvas.spawn", None, {"kind": "note"})
    assert (d.code, d.reason) == ("CARD_LIMIT", "card-cap"), d
    await engine.remove_node("t1")
    assert (await engine.call("c1", "canvas.spawn", None, {"kind": "note"})).allowed


async def test_spawns_refused_card_limit_are_not_counted(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """Ten spawns refused by the card cap, then ten by the live cap, leave the window as
    the accepted spawns alone fill it."""
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path, settings={"card_cap": 3})
    await offer_install(engine, manifest("acme.s", {"canvas.spawn": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")

    async def spawn() -> Any:
        return await engine.call("c1", "canvas.spawn", None, {"kind": "note"})

    # GIVEN two spawns, then ten refused by the card cap
    assert [(await spawn()).allowed for _ in range(2)] == [True, True]
    for _ in range(10):
        d = await spawn()
        assert (d.code, d.reason) == ("CARD_LIMIT", "card-cap"), d
    # THEN with room made, two more go in that minute, and the fifth waits the minute
    await engine.set_settings("w1", {"card_cap": 100})
    assert [(await spawn()).allowed for _ in range(2)] == [True, True]
    d = await spawn()
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 60.0), d
    # GIVEN a minute on, ten refused by the live-spawn cap (its four notes live)
    clock.t += 60
    for _ in range(10):
        d = await spawn()
        assert (d.code, d.reason) == ("CARD_LIMIT", "spawn-cap"), d
    # THEN with its notes removed, four go in that minute, and the fifth waits
    for note in [n.id for n in engine.state.canvas.nodes("w1", type="note")]:
        await engine.remove_node(note)
    assert [(await spawn()).allowed for _ in range(4)] == [True] * 4
    assert (await spawn()).code == "RATE_LIMITED"
