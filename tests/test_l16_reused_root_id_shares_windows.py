"""SPEC §6: a copy (kind `self`) "shares the rate windows of the card that spawned it —
the windows belong to the root of the spawn tree". The windows of a removed root stay
with its live copies (`CanvasOps.remove_node`), under the removed root's id.

When the person later adds a *new* card with that id — here of another package — the
copies' ``spawned_by`` still names the id, `rate_owner` walks to the new node, and the
orphaned copy of acme.s and the unrelated card of other.p now share one set of
windows (and the new card counts the copy as its own live spawned card). A card of
one package can spend another package's card's limits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock

from .conftest import manifest, offer_install


async def test_a_new_card_with_a_removed_roots_id_gets_its_own_windows(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.s", {"canvas.spawn": {}, "agents.prompt": {}}))
    await offer_install(engine, manifest("other.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    copy = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    await engine.add_arrow({"id": "e1", "from": copy, "to": "a1"})
    await engine.remove_node("c1")  # the copy lives on
    # Later the person puts a card of another app on the canvas, with the free id c1.
    await engine.add_node({"id": "c1", "type": "card", "package": "other.p"}, workspace="w1")
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a1"})
    for i in range(6):
        assert (await engine.call(copy, "agents.prompt", "a1", {"text": f"{i}"})).allowed
    # other.p's card has made no call at all: its window is empty.
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "mine"})
    assert d.allowed, d.message
