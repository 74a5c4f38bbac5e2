"""SPEC §6 "Workspace budget", §10: the workspace's prompt budget holds across all engines
on one store, and across a restart.

Rule: every engine delivering prompts for a workspace takes from the one bucket the
store keeps (read and advanced under the write lock in the write that delivers): two
engines together deliver no more than the budget, and an engine opened again finds the
level the last one left, not a full bucket.

(Found in round 18: each engine paced with an aiolimiter bucket of its own, in memory:
two engines on one store delivered up to twice the budget, and a restart gave the
workspace a full bucket again.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install, until
from tests.durability.targets import Target

#: Three prompts a minute: a unit frees every 20 s.
BUDGET = [3, 60.0]


async def _workspace(engine: Any, tmp_path: Path, agents: int) -> None:
    """w1 with budget `BUDGET`, cards c1 and c2, and waiting agents a1.. each reached by both."""
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws", settings={"budget": BUDGET})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    for card in ("c1", "c2"):
        await engine.add_node({"id": card, "type": "card", "package": "acme.p"},
                              workspace="w1")
    for i in range(1, agents + 1):
        await engine.add_node({"id": f"a{i}", "type": "agent", "status": "waiting"},
                              workspace="w1")
        for card in ("c1", "c2"):
            await engine.add_arrow({"id": f"{card}a{i}", "from": card, "to": f"a{i}"})


def _delivered(target: Target) -> int:
    """Prompts delivered, as the store holds them (whichever engine delivered them)."""
    return len(target.query("select id from prompts where state = 'delivered'"))


async def test_two_engines_together_deliver_at_most_the_budget(
        target: Target, make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """Three prompts through A and three through B, budget 3 a minute: three go, then one
    each 20 s, whichever engine's wait takes it."""
    # GIVEN two engines on one store, a workspace of budget 3 a minute, six waiting agents
    a = make_engine()
    await _workspace(a, tmp_path, 6)
    b = make_engine()
    # WHEN each engine makes three prompts, one to each of three agents
    for i in (1, 2, 3):
        await a.call("c1", "agents.prompt", f"a{i}", {"text": f"from A {i}"})
    for i in (4, 5, 6):
        await b.call("c2", "agents.prompt", f"a{i}", {"text": f"from B {i}"})
    # THEN together they delivered the budget, no more; the rest wait for it
    assert _delivered(target) == 3, "each engine delivered a whole budget of its own"
    assert len(target.query("select id from prompts where state = 'queued'")) == 3
    # AND 20 s on, one unit has freed: one more prompt goes, by either engine's wait
    clock.t += 20.0
    await until(lambda: _delivered(target) >= 4)
    await asyncio.sleep(0.6)  # both waits woke (they nap 0.2 s) and tried under the lock
    assert _delivered(target) == 4, "both engines took the one unit that freed"


async def test_an_engine_opened_again_keeps_the_bucket_level(
        target: Target, make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """The budget used up, the engine closed and opened again: the next prompt waits."""
    # GIVEN a workspace of budget 3 a minute whose three units were used
    a = make_engine()
    await _workspace(a, tmp_path, 4)
    for i in (1, 2, 3):
        await a.call("c1", "agents.prompt", f"a{i}", {"text": f"go {i}"})
    assert _delivered(target) == 3
    # WHEN the engine is closed and opened again, at the same time
    a.close()
    again = make_engine()
    fourth = await again.call("c1", "agents.prompt", "a4", {"text": "go 4"})
    # THEN the bucket is as full as it was: the prompt waits for budget
    assert again.prompt(fourth.prompt).state == "queued", "a restart refilled the bucket"
    # AND goes once a unit frees (20 s on)
    clock.t += 20.0
    await until(lambda: again.prompt(fourth.prompt).state == "delivered")
