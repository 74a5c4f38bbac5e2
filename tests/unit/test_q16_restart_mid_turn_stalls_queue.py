"""q16: an engine stopped while a driven agent works leaves that agent ``working``
for good, and its queue never moves again.

`Engine.aclose` kills the agent's running command (CommandAgent.close) but the
node keeps the ``working`` status that delivery stored, and the delivered
prompt stays ``delivered``. After the restart `start_drivers` attaches a fresh
CommandAgent (engine/engine.py `start_drivers`) without looking at the status,
so `Prompts.pump` (engine/services/prompts.py, ``while status == "waiting"``)
never delivers again: every later prompt to the agent sits ``queued`` forever,
and nothing ever ends the prompt whose run was killed. Spec silent; a careful
user expects a restart not to wedge an agent (the killed turn ends — replied
with an error or cancelled — and the agent takes prompts again).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_agent_takes_prompts_after_a_restart_mid_turn(make_engine: Any,
                                                             tmp_path: Path) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A",
                           "command": ["sh", "-c", "sleep 1; echo done"]}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    assert await engine.start_drivers("w1") == {"a1": "started"}
    first = await engine.call("c1", "agents.prompt", "a1", {"text": "long task"})
    assert engine.state.canvas.node("a1").data["status"] == "working"
    # WHEN the app is stopped mid-turn (its agent's command is killed) and started again
    await engine.aclose()
    again = make_engine()
    assert await again.start_drivers("w1") == {"a1": "started"}
    second = await again.call("c1", "agents.prompt", "a1", {"text": "next task"})
    for _ in range(40):
        await asyncio.sleep(0.1)
        await again.world.settle()
        if again.prompt(second.prompt).state == "replied":
            break
    try:
        # THEN the agent took the next prompt and answered it
        states = (again.prompt(first.prompt).state, again.prompt(second.prompt).state,
                  again.state.canvas.node("a1").data["status"])
        assert states[1] == "replied", f"(first, second, agent status) = {states}"
    finally:
        await again.aclose()
