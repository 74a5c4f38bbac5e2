"""SPEC §6 "Workspace budget": prompts wait for budget, they are not refused for it.

Rule: a change of the budget setting takes effect at once (`Prompts.forget_budget`): a
wait on the old budget is cancelled, and the workspace's queued prompts go as the new
budget allows, longest waiting first.

(Found by a helper: while the workspace waited for budget, `pump` returned at once and
the wait stayed on the old limiter, so with [1, 3600] raised to [100, 1] every prompt
stayed queued for up to an hour.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.conftest import polls

from ..conftest import manifest, offer_install


async def test_a_raised_budget_delivers_the_waiting_prompt_at_once(make_engine: Any,
                                                                   tmp_path: Path) -> None:
    """After the budget is raised, the prompt waiting for budget is delivered at once."""
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
    for _ in polls():
        if engine.prompt(second.prompt).state != "queued":
            break
        await asyncio.sleep(0.01)
    # THEN the new budget has room: the waiting prompt goes (the third waits its turn)
    assert engine.prompt(second.prompt).state == "delivered", \
        "a raised budget is ignored until the old hour-long wait ends"
    assert engine.prompt(third.prompt).state == "queued"
