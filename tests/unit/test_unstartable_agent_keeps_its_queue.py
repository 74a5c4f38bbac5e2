"""An agent whose command cannot start is ``finished`` before anything pumps its queue.

The failed start is one report (a reply and the ``finished`` status together),
so the prompts queued behind it stay queued for a fixed command or a person.

(Found by a helper: the reply set the agent ``waiting`` and pumped before the
status landed, so every queued prompt was "replied" with the start error.)
"""

from __future__ import annotations

import asyncio

import pytest

from engine import Engine
from engine.core.errors import InvalidArgument
from engine.effects.drivers import CommandAgent
from tests.conftest import polls


async def test_prompts_behind_a_failed_start_stay_queued(world: Engine) -> None:
    # GIVEN an agent whose configured program does not exist, and three prompts for it
    await world.attach_driver("a1", CommandAgent("a1", ["/nonexistent/agent"]))
    ids = [(await world.call("c1", "agents.prompt", "a1", {"text": f"task {i}"})).prompt
           for i in range(3)]
    for _ in polls():  # until the failed start is reported (a slow child on a loaded machine)
        await asyncio.sleep(0.02)
        await world.world.settle()
        if world.state.canvas.node("a1").data["status"] == "finished":
            break
    await world.world.settle()
    # THEN the agent is finished after the first failed start …
    assert world.state.canvas.node("a1").data["status"] == "finished"
    states = [world.prompt(p).state for p in ids]
    # … and the prompts behind it were not handed to it
    assert states[1:] == ["queued", "queued"], f"prompt states {states}"


async def test_a_turn_ends_only_waiting_or_finished(world: Engine) -> None:
    """Any other status is refused, naming it, and the turn is not ended."""
    prompt = await world.call("c1", "agents.prompt", "a1", {"text": "task"})
    with pytest.raises(InvalidArgument, match="'working'"):
        await world.agent_replied("a1", "done", status="working")
    assert world.prompt(prompt.prompt).state == "delivered"
