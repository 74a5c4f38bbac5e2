"""A card is told the truth about a request a person denies (SPEC §4.2: "the card is told
either way"): a deny takes nothing back, so a permission its package already holds is
answered granted, in the return value and in the card's ``permissions.request`` event.

(Found by a helper, round 17: a deny of a permission already granted told the card
``granted: false`` while the grant stayed; taking it back is a revoke's, which tells
every card of the package.)
"""

from __future__ import annotations

from engine import Engine
from engine.core.events import Event


def _told(events: list[Event]) -> list[object]:
    return [e.data.get("granted") for e in events if e.type == "permissions.request"]


async def test_a_deny_of_a_permission_held_answers_granted_and_keeps_it(world: Engine) -> None:
    events: list[Event] = []
    world.sink = events.append
    await world.set_node("c1", {"visible": True})
    assert await world.request("c1", "clipboard.write", answer=True) is True
    assert await world.request("c1", "clipboard.write", answer=False) is True
    assert _told(events) == [True, True]
    assert world.state.granted("acme.prompter", "clipboard.write")


async def test_a_deny_of_a_permission_not_held_answers_denied(world: Engine) -> None:
    events: list[Event] = []
    world.sink = events.append
    await world.set_node("c1", {"visible": True})
    assert await world.request("c1", "clipboard.write", answer=False) is False
    assert _told(events) == [False]
    assert not world.state.granted("acme.prompter", "clipboard.write")
