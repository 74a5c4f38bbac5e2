"""A card takes `agents.*` events only of its own workspace, judged by the workspace
the event itself names when it was sent — not by whatever node holds the agent id now.

SPEC §3: `agents.read` events (`agents.status`, `agents.turn`, `agents.changed`) are
for "agents and terminals of the card's own workspace". Every such event names its
workspace (`agents.turn` too), and `may_receive` reads that.

(Found by a helper: `may_receive` looked the agent id up on the canvas at delivery and
read the event's own workspace only when the id was gone, so once B's agent x1 was
removed and an x1 added in A, a card of A took B's buffered events.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_a_card_never_takes_events_of_another_workspace(
        make_engine: Any, tmp_path: Path) -> None:
    """B's events about agent x1 stay B's after x1 is removed and reused in A."""
    # GIVEN a reader card rA in A subscribed while B's agent x1 changes and goes
    engine = make_engine()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    await engine.create_workspace("A", tmp_path / "a")
    await engine.create_workspace("B", tmp_path / "b")
    await offer_install(engine, manifest("acme.reader", {"agents.read": {}}))
    await engine.add_node({"id": "rA", "type": "card", "package": "acme.reader"},
                          workspace="A")
    await engine.add_node({"id": "x1", "type": "agent", "name": "B's agent"}, workspace="B")
    sub = engine.subscribe("rA")
    await engine.set_node("x1", {"name": "B's release bot"})  # agents.changed in B
    await engine.remove_node("x1")                            # agents.changed in B
    # WHEN an agent x1 is added in A before rA takes its events
    await engine.add_node({"id": "x1", "type": "agent"}, workspace="A")
    # THEN rA takes only events that name A
    taken = [(ev.type, ev.data) for ev in sub.ready()]
    assert [ev for ev in taken if ev[1].get("workspace") != "A"] == [], taken
