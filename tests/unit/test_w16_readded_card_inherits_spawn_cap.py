"""SPEC §3/§6: a card has at most 4 *live spawned cards*. A new card added with the id
of a removed card has spawned nothing, yet the nodes the removed card spawned keep
``spawned_by`` = that id (engine/services/canvas.py remove_node re-parents only card
copies), and `_spawn_caps` (engine/core/checks.py) counts every node whose
``spawned_by`` equals the caller's id: the new card is refused ``CARD_LIMIT``
``spawn-cap`` for another card's spawns (w16).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_new_card_with_a_removed_cards_id_may_spawn(
        make_engine: Any, tmp_path: Path, clock: Any) -> None:
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.old", {"canvas.spawn": {}}))
    await offer_install(engine, manifest("acme.new", {"canvas.spawn": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.old"}, workspace="w1")
    for _ in range(4):
        assert (await engine.call("c1", "canvas.spawn", None, {"kind": "note"})).outcome == "ok"
    await engine.remove_node("c1")  # its four notes stay on the canvas
    clock.t += 120  # well past every rate window
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.new"}, workspace="w1")
    d = await engine.call("c1", "canvas.spawn", None, {"kind": "note"})
    assert (d.outcome, d.code, d.reason) == ("ok", None, None), d.message
