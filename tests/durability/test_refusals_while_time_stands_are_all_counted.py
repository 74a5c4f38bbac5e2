"""While the engine's time stands still (the clock stepped back, SPEC §6), a card's refusal
rows stay within ``denial_log_limit`` — the window of the row budget (SPEC §8 "Bounds")
does not move either — but every refusal is still answered and counted: the rows
logged one by one and the ``suppressed`` rows' counts sum to every refusal made,
before and after a restart, on both stores; once the clock has caught up and run on,
refusals are logged row by row again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install

LIMIT = 3


async def _canvas(engine: Engine, folder: Path) -> None:
    """Card c1 wired to agent a1 (working); agent a2 it has no arrow to."""
    folder.mkdir()
    await engine.create_workspace("w1", folder, settings={"denial_log_limit": LIMIT})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    for agent in ("a1", "a2"):
        await engine.add_node({"id": agent, "type": "agent", "status": "working"},
                              workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})


async def _refusals(engine: Engine, n: int, clock: VirtualClock) -> None:
    for _ in range(n):
        clock.t += 0.5  # the clock runs, still behind the engine's time
        d = await engine.call("c1", "agents.prompt", "a2", {"text": "let me in"})
        assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-connected"), d


def _counted(engine: Engine) -> tuple[int, int]:
    """(refusals of c1 logged row by row, refusals the suppressed rows sum up)."""
    rows = engine.log_rows(card="c1")
    alone = sum(1 for r in rows if r["outcome"] == "denied")
    summed = sum(int(json.loads(r["payload"])["count"])
                 for r in rows if r["outcome"] == "suppressed")
    return alone, summed


async def test_every_refusal_is_counted_while_time_stands_and_after_a_restart(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """40 refusals while time stands, a call that goes, 40 more, a restart: 80 counted,
    LIMIT of them row by row; after the clock catches up, rows one by one again."""
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    clock.t = 5000.0
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "first"})).allowed
    # GIVEN the clock stepped back an hour: the engine's time stands at 5000
    clock.t -= 3600
    await _refusals(engine, 40, clock)
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "between"})).allowed
    await _refusals(engine, 40, clock)
    assert engine.now() == 5000.0
    # WHEN the engine is closed and opened again
    engine.close()
    engine = make_engine()
    # THEN every refusal is counted: LIMIT rows alone (the window did not move), the
    # rest in suppressed rows
    assert _counted(engine) == (LIMIT, 80 - LIMIT)
    # AND once the clock has caught up and run a minute on, they are rows again
    clock.t = 5061.0
    await _refusals(engine, LIMIT, clock)
    assert _counted(engine) == (2 * LIMIT, 80 - LIMIT)
