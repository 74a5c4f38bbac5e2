"""SPEC §3, §10: input waiting for a starting driver is typed by the driver that replaces it.

Rule: input the engine answered ``sent`` is typed exactly once, or the terminal
says plainly it was dropped. When a second attach replaces a terminal's driver
while the first is still starting, the input that waited for the first is
handed on to the second, in order, before what comes after: the terminal the
card wrote to is still driven, and nothing says it was dropped.

(Found in round 23: the first driver's waiting input was dropped as its start
ended replaced — "the terminal's driver did not start: input not typed" — though
its replacement drove the terminal.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import Engine
from engine.core.events import Event
from tests.durability.test_a_terminal_is_claimed_before_its_driver_starts import _Slow
from tests.durability.wiring import Recording, wire_terminal


async def test_a_replaced_starting_drivers_input_is_typed_by_its_replacement(
        open_engine: Any, tmp_path: Path) -> None:
    app: Engine = open_engine()
    said: list[Event] = []
    app.sink = said.append
    await wire_terminal(app, tmp_path)
    first = _Slow("t1")
    attaching = asyncio.create_task(app.attach_driver("t1", first))
    await first.starting.wait()
    sent = await app.call("c1", "terminals.run", "t1", {"command": "make test"})
    assert sent.allowed and sent.value == {"state": "sent"}, sent

    second = Recording("t1")
    await app.attach_driver("t1", second)
    later = await app.call("c1", "terminals.write", "t1", {"data": "y\n"})
    assert later.allowed and later.value == {"state": "sent"}, later
    first.go_on.set()
    await attaching
    await app.world.settle()

    assert app.world.drivers.get("t1") is second
    assert first.typed == []
    assert second.typed == [("make test", True), ("y\n", False)], "input sent was not typed"
    dropped = [e for e in said if e.type == "agents.onOutput" and "not typed" in str(e.data)]
    assert dropped == [], "said dropped, though its replacement drives the terminal"
