"""SPEC §3: `agents.read` events (`agents.status`, `agents.turn`, `agents.changed`) are
for "agents and terminals of the card's own workspace".

The delivery-time gate (engine/services/subscriptions.py `may_receive`) decides an
event's workspace by looking its agent id up on the canvas *now*, and reads the
workspace the event itself carries only when the id is gone. When an agent of
workspace B is removed and an agent with the same id is added in workspace A before a
card of A takes its buffered events, the card receives B's events — they say
``"workspace": "B"`` themselves (w16).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_a_card_never_takes_events_of_another_workspace(
        make_engine: Any, tmp_path: Path) -> None:
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
    await engine.add_node({"id": "x1", "type": "agent"}, workspace="A")
    taken = [(ev.type, ev.data) for ev in sub.ready()]
    assert [ev for ev in taken if ev[1].get("workspace") != "A"] == [], taken
