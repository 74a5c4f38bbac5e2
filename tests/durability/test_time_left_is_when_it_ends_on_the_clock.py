"""While the engine's time stands still ahead of the clock, the time left of a hold and of a
tool call, and a hold's deadline as told, are when they really end by the clock (SPEC §6,
§7, §9), on both stores.

(Found in round 26: round 25 made them end after their timeout on the clock, but what was
told stayed on the engine's time. A hold made 100 s before the clock stepped back said
200 s left, and expired 300 s of the clock on; a tool call said nothing of the clock at
all; a hold made while time stood was announced (``prompt.held``) with a deadline the
clock would reach an hour later.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.events import Event
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

T0 = 1_800_000_000.0


async def _wired(engine: Engine, folder: Path) -> None:
    """Card c1 (agents.prompt, tool ping) wired to the dangerous agent y1; a1 → c1."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}, tools=["ping"]))
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "a1", "type": "agent"},
                 {"id": "y1", "type": "agent", "dangerous": True}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "y1"})


async def test_time_left_counts_down_to_when_they_end_on_the_clock(
        target: Target, tmp_path: Path) -> None:
    """Held and opened at T0, the clock steps back an hour 100 s on: the hold has the
    200 s of its 300 s it had left, the tool call 20 s of its 120 s (round 27: the
    seconds waited before the step count), and each ends when that runs out."""
    clock = VirtualClock(T0)
    engine = target.open(clock=clock)
    try:
        await _wired(engine, tmp_path / "ws")
        held = await engine.call("c1", "agents.prompt", "y1", {"text": "deploy"})
        opened = await engine.tool("a1", "c1", "ping")
        assert held.outcome == "held" and opened.allowed, (held, opened)
        prompt, call_id = str(held.prompt), opened.value["id"]
        clock.t += 100.0
        await engine.expire_due()
        clock.t -= 3600.0
        await engine.expire_due()  # the engine sees its time stand still
        assert engine.hold_left(prompt) == pytest.approx(200.0, abs=1e-3)
        assert engine.tool_left(call_id) == pytest.approx(20.0, abs=1e-3)
        clock.t += 19.0
        await engine.expire_due()
        assert engine.tool_left(call_id) == pytest.approx(1.0, abs=1e-3)
        clock.t += 1.0
        await engine.expire_due()
        assert engine.tool_left(call_id) is None
        assert engine.tool_call(call_id).state == "expired"  # type: ignore[union-attr]
        assert engine.hold_left(prompt) == pytest.approx(180.0, abs=1e-3)
        clock.t += 179.0
        await engine.expire_due()
        assert engine.hold_left(prompt) == pytest.approx(1.0, abs=1e-3)
        clock.t += 1.0
        await engine.expire_due()
        assert engine.hold_left(prompt) is None
        assert engine.prompt(prompt).state == "expired"  # type: ignore[union-attr]
    finally:
        engine.close()


async def test_a_hold_made_while_time_stands_is_told_with_its_deadline_on_the_clock(
        target: Target, tmp_path: Path) -> None:
    """The ``prompt.held`` event and `Engine.hold_ends` say the clock's reading plus the
    300 s the hold has, not a deadline on the engine's time an hour on."""
    clock = VirtualClock(T0)
    told: list[Event] = []
    engine = target.open(clock=clock, sink=told.append)
    try:
        await _wired(engine, tmp_path / "ws")
        clock.t -= 3600.0
        await engine.expire_due()
        held = await engine.call("c1", "agents.prompt", "y1", {"text": "deploy"})
        assert held.outcome == "held", held
        [event] = [e for e in told if e.type == "prompt.held"]
        assert event.data["deadline"] == pytest.approx(clock.t + 300.0, abs=1e-3), event
        clock.t += 30.0
        assert engine.hold_ends(str(held.prompt)) == pytest.approx(clock.t + 270.0, abs=1e-3)
    finally:
        engine.close()
