"""SPEC §6 "Workspace budget": prompts wait for budget, they are not refused for it, and
a changed budget setting paces afresh (`Prompts.forget_budget`).

(rv16: since `pump` returns at once while the workspace is in `_waiting_budget`, a budget
raised while short is ignored until the *old* limiter's waiter fires: with [1, 3600]
raised to [100, 1], every prompt stays queued for up to an hour. Before the change the
next pump took room from the new limiter.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..conftest import manifest, offer_install


async def test_raising_a_short_budget_lets_the_next_prompt_go(make_engine: Any,
                                                              tmp_path: Path) -> None:
    """After the budget is raised, a new prompt to a waiting agent is delivered."""
    # GIVEN a workspace whose budget (one delivery an hour) is spent, a prompt waiting
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws", settings={"budget": [1, 3600.0]})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1"}, workspace="w1")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    first = await engine.call("c1", "agents.prompt", "a1", {"text": "one"})
    assert engine.prompt(first.prompt).state == "delivered"
    await engine.agent_replied("a1", "done")
    second = await engine.call("c1", "agents.prompt", "a1", {"text": "two"})
    assert engine.prompt(second.prompt).state == "queued"  # short: waits for budget
    # WHEN the person raises the budget, and the card prompts again
    await engine.set_settings("w1", {"budget": [100, 1.0]})
    third = await engine.call("c1", "agents.prompt", "a1", {"text": "three"})
    for _ in range(50):
        if engine.prompt(second.prompt).state != "queued":
            break
        await asyncio.sleep(0.01)
    # THEN the new budget has room: the waiting prompt goes (the third waits its turn)
    assert engine.prompt(second.prompt).state == "delivered", \
        "a raised budget is ignored until the old hour-long wait ends"
    assert engine.prompt(third.prompt).state == "queued"
