"""SPEC §6's spawn row, and §5's check 10 when several of its limits are reached at once.

``canvas.spawn``: at most 4 spawns a minute (``RATE_LIMITED``, ``retry_after``), at most
4 live spawned cards in a card's spawn tree (``CARD_LIMIT``, ``spawn-cap``: a removed one
frees its place, and a copy spawns in its root's tree), within the workspace card cap,
which counts every node (``CARD_LIMIT``, ``card-cap``). §5 says errors are deterministic;
check 10 holds a window and two caps, told in this order (README, "Decisions where the
spec is silent"): the window, then the spawn tree's cap, then the card cap. On both
stores, and the same after a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Decision, Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install


async def _spawn(engine: Engine, card: str = "c1", kind: str = "note") -> Decision:
    return await engine.call(card, "canvas.spawn", None, {"kind": kind})


def _told(d: Decision) -> tuple[str | None, str | None]:
    return d.code, d.reason


async def test_a_full_window_then_the_trees_cap_then_the_card_cap(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Four spawns fill the window and the tree; the window is told first, then the tree's
    cap (for a copy too), whichever engine asks; a spawned card removed frees its place;
    with the tree and the card cap both full the tree is told, with the card cap alone
    the card cap."""
    # GIVEN card c1 and an agent on a canvas capped at 7 nodes
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws", settings={"card_cap": 7})
    await offer_install(engine, manifest("acme.s", {"canvas.spawn": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    # WHEN it spawns four cards in one minute, one a copy of itself
    spawned = {}
    for kind in ("note", "self", "todo", "sticky"):
        d = await _spawn(engine, kind=kind)
        assert d.allowed, d
        spawned[kind] = str(d.value)
    # THEN a fifth is told the full window first (the tree is full too)
    d = await _spawn(engine)
    assert (_told(d), d.retry_after) == (("RATE_LIMITED", "spawn"), 60.0)
    # ...and once the window has room, the tree's cap: the copy's too, after a restart
    clock.t += 60.0
    for opened in (engine, make_engine()):
        assert _told(await _spawn(opened)) == ("CARD_LIMIT", "spawn-cap")
        assert _told(await _spawn(opened, spawned["self"])) == ("CARD_LIMIT", "spawn-cap")
    # WHEN a person removes a spawned card, its place is free again
    await engine.remove_node(spawned["note"])
    d = await _spawn(engine)
    assert d.allowed, d
    # THEN with the tree full and the canvas at its cap (7 nodes), the tree is told...
    await engine.add_node({"id": "n9", "type": "note"}, workspace="w1")
    assert len(engine.state.canvas.nodes("w1")) == 7
    assert _told(await _spawn(engine)) == ("CARD_LIMIT", "spawn-cap")
    # ...and with room in the tree, the card cap, which counts every node
    await engine.remove_node(spawned["todo"])
    await engine.add_node({"id": "t9", "type": "terminal"}, workspace="w1")
    for opened in (engine, make_engine()):
        assert _told(await _spawn(opened)) == ("CARD_LIMIT", "card-cap")
    assert engine.verify_log().ok
