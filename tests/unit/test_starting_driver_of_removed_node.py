"""A driver becomes its node's only if that node is still the one it was started for when
its start returns; a driver whose node is removed while it starts is stopped, is no one's
driver, and reports nowhere — not into a new node that reuses the id.

(Found by a helper: `World.attach` installed the driver as ``drivers[node.id]`` once
``start`` returned without asking whether the node was still there, and removing the
node stopped only installed drivers, so the starting one was never closed and then took
the prompts of a new agent with the same id.)
"""

from __future__ import annotations

import asyncio

from engine import Engine
from engine.effects.drivers import AgentDriver, DriverHost


class _SlowStart(AgentDriver):
    """An agent driver whose start waits until the test lets it finish."""

    def __init__(self, node: str) -> None:
        super().__init__(node)
        self.host: DriverHost | None = None
        self.go = asyncio.Event()
        self.started = asyncio.Event()
        self.prompts: list[str] = []
        self.closed = False

    async def start(self, host: DriverHost, folder: str) -> None:
        self.host = host
        self.started.set()
        await self.go.wait()

    def submit(self, text: str) -> None:
        self.prompts.append(text)

    def screen(self) -> str:
        return ""

    def close(self) -> None:
        self.closed = True


async def test_a_driver_started_for_a_removed_agent_is_stopped_not_installed(
        world: Engine) -> None:
    """A removed agent's starting driver is closed, and drives no new agent of its id."""
    # GIVEN a1's driver starting (its program is being set up)
    old = _SlowStart("a1")
    attaching = asyncio.ensure_future(world.attach_driver("a1", old))
    await old.started.wait()
    # WHEN a1 is removed meanwhile, and a new a1 (someone else) is added
    await world.remove_node("a1")
    await world.add_node({"id": "a1", "type": "agent", "name": "someone else"},
                         workspace="w1")
    await world.add_arrow({"id": "e1b", "from": "c1", "to": "a1"})
    old.go.set()
    await attaching
    # THEN the old node's driver is not the new node's, and it was stopped
    assert world.world.drivers.get("a1") is not old, \
        "a driver started for the removed a1 now drives the new a1"
    assert old.closed, "the removed agent's starting driver was never closed"
    # AND the new agent's prompt does not go to the removed agent's driver
    await world.call("c1", "agents.prompt", "a1", {"text": "for the new a1"})
    assert old.prompts == []


async def test_a_starting_driver_of_a_removed_agent_reports_nowhere(world: Engine) -> None:
    """What a cancelled starting driver reports never reaches a new node of its id."""
    # GIVEN a1's driver starting, a1 removed, and a new a1 asked to work
    old = _SlowStart("a1")
    attaching = asyncio.ensure_future(world.attach_driver("a1", old))
    await old.started.wait()
    await world.remove_node("a1")
    await world.add_node({"id": "a1", "type": "agent", "name": "someone else"},
                         workspace="w1")
    await world.add_arrow({"id": "e1b", "from": "c1", "to": "a1"})
    asked = await world.call("c1", "agents.prompt", "a1", {"text": "for the new a1"})
    # WHEN the old driver, still starting, reports
    assert old.host is not None
    old.host.replied("a1", "the old run's reply", status="finished")
    old.host.status("a1", "finished")
    await world.world.settle()
    # THEN the new agent's prompt is untouched
    node = world.state.canvas.node("a1")
    assert node is not None
    assert node.data.get("last_reply") != "the old run's reply", node.data
    assert node.data.get("status") != "finished", node.data
    assert world.prompt(asked.prompt).state != "replied"
    old.go.set()
    await attaching
    assert old.closed
