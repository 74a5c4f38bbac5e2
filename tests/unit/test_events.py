"""Events to cards through async iterators, gated by SPEC §3 when the card takes them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine import Engine, Event, InvalidRequest
from engine.effects.drivers import ScriptedAgent

from ..conftest import manifest, offer_install


@pytest.fixture
async def watched(world: Engine) -> Engine:
    """world plus r1 (agents.read only), o1 (agents.output, wired to a1) and b1 (nothing)."""
    await offer_install(world, manifest("acme.reader", {"agents.read": {}}))
    await offer_install(world, manifest("acme.watcher", {"agents.output": {}}))
    await offer_install(world, manifest("acme.blank", {}))
    for node in ({"id": "r1", "type": "card", "package": "acme.reader"},
                 {"id": "o1", "type": "card", "package": "acme.watcher"},
                 {"id": "b1", "type": "card", "package": "acme.blank"}):
        await world.add_node(node, workspace="w1")
    await world.add_arrow({"id": "w1", "from": "o1", "to": "a1"})
    return world


async def taken(sub: Any) -> list[Event]:
    """The events a subscription yields before it would have to wait."""
    out: list[Event] = []
    while True:
        try:
            out.append(await asyncio.wait_for(sub.__anext__(), 0.05))
        except TimeoutError:
            return out


async def test_agents_status_needs_agents_read(watched: Engine) -> None:
    """A status change reaches cards with agents.read (or one implying it), not others."""
    reader, blank, prompter = (watched.subscribe(c) for c in ("r1", "b1", "c1"))
    await watched.call("c1", "agents.prompt", "a1", {"text": "go"})  # a1 starts working
    got = [e for e in await taken(reader) if e.type == "agents.status"]
    assert [(e.data["agent"], e.data["status"]) for e in got] == [("a1", "working")]
    assert await taken(blank) == []
    # agents.prompt implies agents.read, so the prompter sees it too.
    assert "agents.status" in {e.type for e in await taken(prompter)}


async def test_revocation_between_sending_and_taking_drops_the_event(watched: Engine) -> None:
    """The gate runs when the card takes the event, not when it was sent."""
    # GIVEN an event sent to r1 while agents.read was granted
    sub = watched.subscribe("r1")
    await watched.call("c1", "agents.prompt", "a1", {"text": "go"})
    # WHEN the grant is revoked before r1 takes it
    await watched.revoke("acme.reader", "agents.read")
    # THEN r1 gets only the news of the revocation
    assert [e.type for e in await taken(sub)] == ["permissions.changed"]


async def test_agents_changed_on_add_and_remove(watched: Engine) -> None:
    """Adding or removing an agent or terminal is agents.changed; a note is not."""
    sub = watched.subscribe("r1")
    await watched.add_node({"id": "a9", "type": "agent"}, workspace="w1")
    await watched.add_node({"id": "n9", "type": "note"}, workspace="w1")
    await watched.remove_node("a9")
    got = [(e.data["agent"], e.data["change"]) for e in await taken(sub)
           if e.type == "agents.changed"]
    assert got == [("a9", "added"), ("a9", "removed")]


async def test_other_workspaces_agents_are_not_shown(watched: Engine, tmp_path: Any) -> None:
    """agents.read covers the card's own workspace only."""
    (tmp_path / "other").mkdir()
    await watched.create_workspace("w2", tmp_path / "other")
    sub = watched.subscribe("r1")
    await watched.add_node({"id": "x1", "type": "agent"}, workspace="w2")
    assert await taken(sub) == []


async def test_live_output_needs_the_call_the_grant_and_the_arrow(watched: Engine) -> None:
    """agents.onOutput: only after an allowed onOutput call, and only while wired."""
    await watched.attach_driver("a1", ScriptedAgent("a1", {"go": "on it"}))
    sub = watched.subscribe("o1")
    await watched.call("c1", "agents.prompt", "a1", {"text": "go"})
    await watched.world.settle()
    assert [e for e in await taken(sub) if e.type == "agents.onOutput"] == []
    assert (await watched.call("o1", "agents.onOutput", "a1")).outcome == "ok"
    await watched.call("c1", "agents.prompt", "a1", {"text": "go"})
    await watched.world.settle()
    text = "".join(e.data["text"] for e in await taken(sub) if e.type == "agents.onOutput")
    assert text.strip() == "on it"
    # Once the arrow is gone, output sent before the card took it is dropped too.
    await watched.call("c1", "agents.prompt", "a1", {"text": "go"})
    await watched.world.settle()
    await watched.remove_arrow("w1")
    assert [e for e in await taken(sub) if e.type == "agents.onOutput"] == []


async def test_permissions_changed_goes_to_the_package_cards_only(watched: Engine) -> None:
    """Revoking tells every card of that package, and no other card."""
    mine, other = watched.subscribe("c1"), watched.subscribe("r1")
    await watched.revoke("acme.prompter", "terminals.write")
    assert [e.type for e in await taken(mine)] == ["permissions.changed"]
    assert [e.type for e in await taken(other)] == []


async def test_subscribe_unknown_card_and_overflow(watched: Engine) -> None:
    """Unknown cards cannot subscribe; a card far behind is told how many it missed."""
    with pytest.raises(InvalidRequest, match="CARD_UNKNOWN"):
        watched.subscribe("a1")
    sub = watched.subscribe("r1", limit=2)
    for i in range(5):
        await watched.add_node({"id": f"x{i}", "type": "terminal"}, workspace="w1")
    got = await taken(sub)
    assert got[0].type == "events.dropped" and got[0].data["count"] == 3
    assert [e.data["agent"] for e in got[1:]] == ["x3", "x4"]
    sub.close()
    with pytest.raises(StopAsyncIteration):
        await sub.__anext__()
