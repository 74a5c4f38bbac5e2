"""A card added with the id of a removed card starts afresh (README, "Decisions where
the spec is silent": "Removing a node also deletes its rate windows ... so a new node
with the same id does not inherit them").

When the removed card had a live copy of itself (`canvas.spawn` kind `self`), its
windows are kept for the copy, and the copy keeps ``spawned_by`` = the removed id
(engine/services/canvas.py, remove_node: ``owner == node_id`` for a root). A new,
unrelated card given that id then becomes the copy's spawn root and inherits the old
card's rate windows (w16).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_new_card_with_a_removed_cards_id_has_its_own_prompt_window(
        make_engine: Any, tmp_path: Path) -> None:
    """The new card has made no prompt: its first one is accepted, not RATE_LIMITED."""
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.old", {"agents.prompt": {}, "canvas.spawn": {}}))
    await offer_install(engine, manifest("acme.new", {"agents.prompt": {}}))
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.old"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    assert (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).outcome == "ok"
    for i in range(6):  # the old card's whole prompt window
        d = await engine.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})
        assert d.outcome == "queued"
    await engine.remove_node("c1")  # its copy c1.self1 lives on
    # A person puts another package's card on the canvas under the freed id.
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.new"}, workspace="w1")
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a1"})
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "first of the new card"})
    assert (d.outcome, d.code) == ("queued", None), d.message
