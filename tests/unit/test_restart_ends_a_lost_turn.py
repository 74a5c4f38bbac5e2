"""A turn lost to a restart ends with an error reply, and the agent takes prompts again.

When `start_drivers` starts an agent found ``working`` (the engine stopped
mid-turn and killed the run), the delivered prompt is ``replied`` with
`LOST_TURN` and the agent is ``waiting``: its queue moves on.

(Found by a helper: after a restart the agent stayed ``working`` for good and
every later prompt to it sat ``queued``.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine.core.prompts import LOST_TURN
from tests.conftest import polls

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
    # the lost turn ended with its error reply
    assert (again.prompt(first.prompt).state,
            again.state.canvas.node("a1").data["last_reply"]) == ("replied", LOST_TURN)
    second = await again.call("c1", "agents.prompt", "a1", {"text": "next task"})
    for _ in polls():
        await asyncio.sleep(0.1)
        await again.world.settle()
        if again.prompt(second.prompt).state == "replied":
            break
    try:
        # THEN the agent took the next prompt and answered it
        states = (again.prompt(first.prompt).state, again.prompt(second.prompt).state,
                  again.state.canvas.node("a1").data["status"])
        assert states[:2] == ("replied", "replied"), f"(first, second, agent status) = {states}"
        assert again.state.canvas.node("a1").data["last_reply"] == "done"
    finally:
        await again.aclose()
