"""q16: an agent whose command cannot start "replies" to every queued prompt.

CommandAgent._turn (engine/effects/drivers/agent.py) reports a failed start as
two separate engine operations: ``host.replied(...)`` and then
``host.status(node, "finished")``. `Prompts.agent_replied` sets the agent
``waiting`` and pumps its queue before the status lands, so the next queued
prompt is delivered to the broken agent, fails the same way, and so on: every
queued prompt ends ``replied`` (with "[could not start …]") and spends the
workspace budget, though no agent ever ran. The driver's own contract is that
a command that cannot be started leaves the agent ``finished`` — a finished
agent is not delivered to, so the prompts behind the first should stay queued
(for a fixed command, or for a person to see).
"""

from __future__ import annotations

import asyncio

from engine import Engine
from engine.effects.drivers import CommandAgent


async def test_prompts_behind_a_failed_start_stay_queued(world: Engine) -> None:
    # GIVEN an agent whose configured program does not exist, and three prompts for it
    await world.attach_driver("a1", CommandAgent("a1", ["/nonexistent/agent"]))
    ids = [(await world.call("c1", "agents.prompt", "a1", {"text": f"task {i}"})).prompt
           for i in range(3)]
    for _ in range(40):
        await asyncio.sleep(0.02)
        await world.world.settle()
    # THEN the agent is finished after the first failed start …
    assert world.state.canvas.node("a1").data["status"] == "finished"
    states = [world.prompt(p).state for p in ids]
    # … and the prompts behind it were not handed to it
    assert states[1:] == ["queued", "queued"], f"prompt states {states}"
