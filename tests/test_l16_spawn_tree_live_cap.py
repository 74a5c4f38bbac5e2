"""SPEC §6: spawn allows "≤ 4 live spawned cards", and a copy (kind `self`) shares the
limits of its spawn tree's root, "so spawning copies never multiplies a card's limits".

A card that has its 4 copies lets each copy spawn 4 more: the tree holds 20 live
spawned cards (and 84 after the next generation), all in the one card's name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock

from .conftest import manifest, offer_install


async def test_copies_of_copies_do_not_multiply_the_live_spawn_cap(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws", settings={"card_cap": 1000})
    await offer_install(engine, manifest("acme.s", {"canvas.spawn": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    copies = []
    for _ in range(4):
        d = await engine.call("c1", "canvas.spawn", None, {"kind": "self"})
        assert d.allowed
        copies.append(d.value)
    clock.t += 61
    assert (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).code == "CARD_LIMIT"
    # The root's tree already holds 4 live spawned cards: a copy spawning is the
    # card spawning through its copy, and must meet the same cap.
    d = await engine.call(copies[0], "canvas.spawn", None, {"kind": "self"})
    live = [n.id for n in engine.state.canvas.nodes("w1") if n.data.get("spawned_by")]
    assert d.code == "CARD_LIMIT", (d, live)
