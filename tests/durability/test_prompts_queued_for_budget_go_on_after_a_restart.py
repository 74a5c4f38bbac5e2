"""Prompts queued for the workspace's budget when the engine stopped are delivered once
the budget allows after it starts again (SPEC §6: prompts wait in the queue for budget,
they are not refused for it; §10: every engine on the store paces delivery by it).

The engine that queued them waited for the budget's next unit in a task of its own; a
restart, or the end of that engine while another runs on the store, left nothing waiting,
and the prompts stayed queued for their waiting agent until something else pumped the
queue (a new prompt to the same agent, its status set again). The timers now deliver
them (`Engine.run_timers`), checked again as every delivery is. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install, until


async def test_a_prompt_queued_for_budget_is_delivered_after_a_restart(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """Budget 1 per 600 s: a1 took the unit, a2's prompt waits; the engine stops, the
    unit frees meanwhile, and the started engine's timers deliver a2's prompt."""
    # GIVEN a2's prompt queued for the budget when the engine stops
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings={"budget": [1, 600]})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    for agent in ("a1", "a2"):
        await engine.add_node({"id": agent, "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": f"e-{agent}", "from": "c1", "to": agent})
    first = await engine.call("c1", "agents.prompt", "a1", {"text": "one"})
    second = await engine.call("c1", "agents.prompt", "a2", {"text": "two"})
    assert engine.prompt(str(first.prompt)).state == "delivered"  # type: ignore[union-attr]
    assert engine.prompt(str(second.prompt)).state == "queued"  # type: ignore[union-attr]
    engine.close()
    # WHEN the budget's next unit is due while no engine runs, and an engine starts
    clock.t += 601
    engine = make_engine()
    stop = asyncio.Event()
    timers = asyncio.create_task(engine.run_timers(stop, every=0.05))
    try:
        # THEN its timers deliver a2's prompt
        await until(lambda: engine.prompt(str(second.prompt)).state == "delivered",  # type: ignore[union-attr]
                    timeout=10)
    finally:
        stop.set()
        await timers
    assert engine.state.canvas.node("a2").data.get("status") == "working"  # type: ignore[union-attr]
