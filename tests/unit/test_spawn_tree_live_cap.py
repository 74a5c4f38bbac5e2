"""SPEC §6: spawn allows "≤ 4 live spawned cards", and a copy (kind `self`) shares the
limits of its spawn tree's root, "so spawning copies never multiplies a card's limits".

Rule: the cap counts the live spawned nodes of the whole spawn tree under its root
(`rate_owner`); a copy spawning is its root spawning through it.

(Found by a helper: the cap was counted per direct spawner, so a card with 4 copies
let each copy spawn 4 more: 20 live spawned cards, 84 after the next generation.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install


async def test_copies_of_copies_do_not_multiply_the_live_spawn_cap(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """A copy may not spawn once its root's tree holds 4 live spawned cards."""
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
