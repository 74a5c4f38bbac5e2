"""SPEC §6 "Workspace budget": delivery is *paced* by the workspace's budget; prompts
"wait in the queue for budget, they are not refused for it". The spec is silent on the
order across agents.

Rule: when the budget has room, it goes to the workspace's prompt that has waited
longest (the earliest queued prompt of any waiting agent there), so a busy agent cannot
starve an earlier prompt to another.

(Found by a helper: the budget went to agents in canvas order, and an agent that replied
pumped only itself, so a card keeping a1 busy took every unit of budget and a prompt
queued earlier for a2 was never delivered.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock
from tests.conftest import polls

from ..conftest import manifest, offer_install


async def test_a_busy_agent_does_not_starve_an_earlier_prompt_to_another(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """y0, queued before every x_i, is delivered at the next unit of budget."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    # One delivery a second, on the engine's clock.
    await engine.create_workspace("w1", tmp_path / "ws", settings={"budget": [1, 1.0]})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    for node in ({"id": "a1", "type": "agent", "name": "A1"},
                 {"id": "a2", "type": "agent", "name": "A2"},
                 {"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "c2", "type": "card", "package": "acme.p"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c2", "to": "a2"})

    first = await engine.call("c1", "agents.prompt", "a1", {"text": "x0"})
    assert engine.prompt(first.prompt).state == "delivered"  # the budget's one unit
    starved = await engine.call("c2", "agents.prompt", "a2", {"text": "y0"})
    assert engine.prompt(starved.prompt).state == "queued"  # waits for budget
    # c1 keeps a1 busy: a prompt queued after y0 each time a1 finishes a turn.
    later = []
    for i in range(1, 4):
        clock.t += 61  # (the card's own rate window is not what is tested)
        later.append((await engine.call("c1", "agents.prompt", "a1", {"text": f"x{i}"})).prompt)
        await engine.agent_replied("a1", f"done {i}")
        for _ in polls():
            if engine.prompt(later[-1]).state != "queued" or \
                    engine.prompt(starved.prompt).state != "queued":
                break
            await asyncio.sleep(0.01)
        if engine.prompt(starved.prompt).state != "queued":
            break
    states = [engine.prompt(p).state for p in later]
    # y0 was queued before every x_i, yet a1 got each unit of budget as it came.
    assert engine.prompt(starved.prompt).state == "delivered", (states, "y0 still queued")
