"""SPEC §10: an agent removed by another process while its driver starts gets no driver,
as a terminal does (tests/durability/test_a_terminal_removed_elsewhere_while_its_driver_
starts_gets_none.py).

Rule: once an agent's driver has started (a real coding agent may take seconds),
its attach judges on the store as it stands: a node the store no longer has gets
no driver — it is stopped, and the attach says the agent is gone (``NOT_FOUND``).

(Found in round 23: round 23 fixed the race for terminals only; an agent's attach
judged the node once, before its driver started, and the driver of a removed agent
ran on, its process kept for a node no canvas has.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.core.errors import InvalidRequest
from engine.effects.drivers.base import DriverHost
from engine.effects.drivers.scripted import ScriptedAgent
from tests.durability.wiring import wire_agent


class _SlowAgent(ScriptedAgent):
    """A scripted agent whose start waits until the test lets it go on, noting a stop."""

    def __init__(self, node: str) -> None:
        super().__init__(node)
        self.starting = asyncio.Event()
        self.go_on = asyncio.Event()
        self.stopped = False

    async def start(self, host: DriverHost, folder: str) -> None:
        self.starting.set()
        await self.go_on.wait()
        await super().start(host, folder)

    def close(self) -> None:
        self.stopped = True
        super().close()


async def test_an_agent_removed_elsewhere_while_its_driver_starts_gets_no_driver(
        make_engine: Any, tmp_path: Path) -> None:
    app: Engine = make_engine()
    await wire_agent(app, tmp_path)
    other: Engine = make_engine()
    driver = _SlowAgent("a1")
    attaching = asyncio.create_task(app.attach_driver("a1", driver))
    await driver.starting.wait()

    await other.remove_node("a1")
    driver.go_on.set()
    with pytest.raises(InvalidRequest) as refused:
        await attaching
    assert refused.value.code == "NOT_FOUND", refused.value
    assert "a1" not in app.world.drivers
    assert driver.stopped, "the driver of a removed agent runs on"
