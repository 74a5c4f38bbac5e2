"""SPEC §6 "Workspace budget" and §7 "Dangerous mode": the budget paces *delivery*;
a hold delivers nothing.

Rule: holding never waits on budget. A prompt queued to an agent that has since gone
into dangerous mode is held for a person as soon as the agent could take it, however
short the workspace's budget is.

(Found by a helper: while the workspace waited for budget, `pump` returned before it
looked at the agent, so such a prompt stayed queued, and no person was asked, until
the budget had room again: up to an hour with a budget of [2, 3600].)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_a_prompt_to_a_dangerous_agent_is_held_while_the_budget_is_short(
        make_engine: Any, tmp_path: Path) -> None:
    """a2's queued prompt is held when a2 ends its turn, while a1's waits for budget."""
    # GIVEN a workspace with two deliveries an hour, both spent, one on each agent
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws", settings={"budget": [2, 3600.0]})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    for node in ({"id": "a1", "type": "agent", "name": "A1"},
                 {"id": "a2", "type": "agent", "name": "A2"},
                 {"id": "c1", "type": "card", "package": "acme.p"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a2"})
    for agent in ("a1", "a2"):
        d = await engine.call("c1", "agents.prompt", agent, {"text": f"go {agent}"})
        assert engine.prompt(d.prompt).state == "delivered"
    # ... a prompt queued to a2 while it works, then a2 put in dangerous mode
    queued = await engine.call("c1", "agents.prompt", "a2", {"text": "rm -rf build"})
    assert engine.prompt(queued.prompt).state == "queued"
    await engine.set_node("a2", {"dangerous": True})
    # ... and the workspace short: a1's next prompt waits for budget
    await engine.agent_replied("a1", "done")
    short = await engine.call("c1", "agents.prompt", "a1", {"text": "again"})
    assert engine.prompt(short.prompt).state == "queued"
    # WHEN a2 ends its turn
    await engine.agent_replied("a2", "done")
    # THEN its prompt is held for a person at once; a1's still waits for budget
    assert engine.prompt(queued.prompt).state == "held", "the hold waited for budget"
    assert [p.id for p in engine.prompts(state="held")] == [queued.prompt]
    assert engine.prompt(short.prompt).state == "queued"
