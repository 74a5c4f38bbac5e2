"""A hold approved in the TUI while its agent's queue is full says the prompt was
cancelled (QUEUE_FULL), as a warning — never "approved" (SPEC §6, §7).

(Round 25: the toast read "prompt p6: approved → QUEUE_FULL", as information, for a
prompt the engine had cancelled; likewise for one a re-check at approval cancelled.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from engine.core.prompts import QUEUE_LIMIT
from tui.screens.hold import HoldScreen

from .conftest import armed, settle
from .world import make_app


async def test_approving_into_a_full_queue_warns_that_it_was_cancelled(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """Y on a hold whose agent has 20 queued prompts: a warning naming QUEUE_FULL and the
    cancellation; the queue stays at 20."""
    # GIVEN yolo's held prompt, and yolo's queue then filled while it works
    app = make_app(tui_db, tui_clock, start="holds")
    engine = app.engine
    (held,) = engine.prompts(state="held")
    await engine.set_node("yolo", {"dangerous": False, "status": "working"})
    # (As an arrowgate before round 27 let it fill: the held prompt not counted among
    # the 20. It is now, and keeps its place, so only such a store is full behind it.)
    with pytest.MonkeyPatch.context() as older:
        older.setattr("engine.core.checks.QUEUE_LIMIT", QUEUE_LIMIT + 1)
        for i in range(QUEUE_LIMIT):
            tui_clock.t += 11  # under 6 a minute, within the hold's 300 s
            assert (await engine.call("standup", "agents.prompt", "yolo",
                                      {"text": f"q{i}"})).outcome == "queued"
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        # WHEN the person approves it
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, HoldScreen)
        await armed(pilot)
        await pilot.press("Y")
        await settle(pilot)
        # THEN it is cancelled, and the person is warned so
        assert engine.prompt(held.id).state == "cancelled"
        assert engine.state.undelivered("yolo") == QUEUE_LIMIT
        told = [n for n in app._notifications if n.title == "hold: approve"]  # noqa: SLF001
        assert told and told[-1].severity == "warning", [n.message for n in told]
        assert f"prompt {held.id} was cancelled, not delivered" in told[-1].message
        assert "QUEUE_FULL" in told[-1].message and "approved →" not in told[-1].message
