"""A removed spawn root frees its id (SPEC §6; the README's "Decisions where the spec is
silent": "Removing a node also deletes its rate windows ... so a new node with the same
id does not inherit them").

Rule: when a spawn root is removed, no node goes on naming its id as spawner. Its first
live copy (in id order) becomes the root and takes the windows; the other copies and the
notes it spawned hang from that new root. With no copy left, its spawned notes count for
no one and its windows are forgotten. A new node given the freed id starts afresh, also
after a reopen.

(Found by helpers: the copies and spawned notes of a removed root kept ``spawned_by`` =
its id, so a new card of any package given that id took over the old card's rate windows
and its live-spawn count.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install


async def test_a_new_card_with_a_removed_roots_id_gets_its_own_windows(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """A copy's calls after its root is removed do not fill a new card's windows."""
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


async def test_new_card_with_a_removed_cards_id_has_its_own_prompt_window(
        make_engine: Any, tmp_path: Path) -> None:
    """The old card's window goes to its copy; the new card's first prompt is accepted."""
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


async def test_new_card_with_a_removed_cards_id_may_spawn(
        make_engine: Any, tmp_path: Path, clock: Any) -> None:
    """Notes a removed card spawned count for no one: a new card with its id may spawn."""
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


async def test_the_new_root_keeps_the_tree_after_a_reopen(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """After a reopen the heir holds the windows and the tree, the freed id nothing."""
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.s", {"canvas.spawn": {},
                                                    "clipboard.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    heir = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    other = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    note = (await engine.call("c1", "canvas.spawn", None, {"kind": "note"})).value
    assert (await engine.call("c1", "clipboard.copyText", None, {"text": "x"})).allowed
    await engine.remove_node("c1")
    engine.close()
    again = make_engine()
    canvas = again.state.canvas
    assert "spawned_by" not in canvas.node(heir).data
    assert canvas.node(other).data["spawned_by"] == heir
    assert canvas.node(note).data["spawned_by"] == heir
    # The tree's windows are the heir's: the copy's call still counts the root's.
    assert (await again.call(other, "clipboard.copyText", None, {"text": "x"})).code \
        == "RATE_LIMITED"
    await again.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    assert (await again.call("c1", "clipboard.copyText", None, {"text": "x"})).allowed
    # Its tree's spawned nodes (2 copies, 1 note) are not the new c1's.
    for _ in range(4):
        clock.t += 61
        assert (await again.call("c1", "canvas.spawn", None, {"kind": "note"})).allowed
