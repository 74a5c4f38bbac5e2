"""What a driver reports reaches its own node only while it is that node's driver: a
removed (or replaced) agent's driver reports nowhere, not into a new agent that reuses
its id.

(Found by the review: `World.replied` and its other reports named the node by id only,
so a removed agent's run ending late — or failing to start — ended the turn of a new
agent with the same id, with the old run's reply or status.)
"""

from __future__ import annotations

from engine import Engine
from engine.effects.drivers import AgentDriver, DriverHost


class _Stub(AgentDriver):
    """An agent driver whose reports the test makes by hand."""

    def __init__(self, node: str) -> None:
        super().__init__(node)
        self.host: DriverHost | None = None
        self.prompts: list[str] = []

    async def start(self, host: DriverHost, folder: str) -> None:
        self.host = host

    def submit(self, text: str) -> None:
        self.prompts.append(text)

    def screen(self) -> str:
        return ""

    def close(self) -> None:
        pass


async def test_a_removed_agents_driver_cannot_end_a_new_agents_turn(world: Engine) -> None:
    # GIVEN a1 driven by `old`, removed, and a new a1 driven by `new`, working on a prompt
    old = _Stub("a1")
    await world.attach_driver("a1", old)
    await world.remove_node("a1")
    await world.add_node({"id": "a1", "type": "agent", "name": "someone else"}, workspace="w1")
    await world.add_arrow({"id": "e1b", "from": "c1", "to": "a1"})
    new = _Stub("a1")
    await world.attach_driver("a1", new)
    asked = await world.call("c1", "agents.prompt", "a1", {"text": "say hello"})
    assert new.prompts == ["say hello"]
    # WHEN the old driver reports late: a reply, a status, output
    assert old.host is not None
    old.host.replied("a1", "the old run's reply", status="finished")
    old.host.status("a1", "finished")
    old.host.output("a1", "old output")
    await world.world.settle()
    # THEN the new agent is still working on its prompt
    node = world.state.canvas.node("a1")
    assert node is not None
    assert node.data["status"] == "working", node.data
    assert node.data.get("last_reply") != "the old run's reply"
    assert world.prompt(asked.prompt).state == "delivered"
    # AND its own driver's reply still ends its turn
    assert new.host is not None
    new.host.replied("a1", "hello")
    await world.world.settle()
    assert world.state.canvas.node("a1").data["last_reply"] == "hello"  # type: ignore[union-attr]


async def test_a_replaced_drivers_reports_go_nowhere(world: Engine) -> None:
    # GIVEN a1's driver replaced by another while it works
    old, new = _Stub("a1"), _Stub("a1")
    await world.attach_driver("a1", old)
    asked = await world.call("c1", "agents.prompt", "a1", {"text": "build"})
    await world.attach_driver("a1", new)
    # WHEN the replaced one reports
    assert old.host is not None
    old.host.replied("a1", "stale")
    await world.world.settle()
    # THEN nothing changed
    assert world.state.canvas.node("a1").data.get("last_reply") != "stale"  # type: ignore[union-attr]
    assert world.prompt(asked.prompt).state == "delivered"
