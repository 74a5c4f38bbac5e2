"""rw16: a driver whose node is removed while it is starting must not become the driver of
the node (nor of a new node that reuses the id), and must be stopped.

`World.attach` marks the driver `_starting` (so it `drives`, and its reports reach the
engine), and installs it as ``drivers[node.id]`` once ``start`` returns, without asking
whether the node it was started for is still there. `World.committed` stops a removed
agent's driver by popping ``drivers`` only: a driver still starting is not there yet, so
it is never closed, and is then installed for a node that no longer exists -- or for a new
agent with the same id, whose prompts it then takes and whose turns its reports end.
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


async def test_a_driver_started_for_a_removed_agent_is_not_installed(world: Engine) -> None:
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
