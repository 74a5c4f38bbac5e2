"""An approval the engine could not carry out (the prompt cancelled on approval: the
agent's queue full, a rule that no longer holds) is told as not sent, never "approved".

(Found by helper tui25: the toast read "prompt p2: approved → QUEUE_FULL", an
information note that a person reads as sent, while the prompt was cancelled and
nothing reached the agent.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tui.screens.hold import HoldScreen

from .conftest import open_hold, settle
from .world import make_app


async def test_an_approval_cancelled_by_the_engine_is_told_as_not_sent(
        tui_db: Path, tui_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN an agent whose queue counts as full (no prompt more may wait for it)
    monkeypatch.setattr("engine.services.prompts.QUEUE_LIMIT", 0)
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        held = app.engine.prompts(state="held")[0].id
        dialog = await open_hold(pilot, held)
        assert isinstance(dialog, HoldScreen) and dialog.all_seen
        # WHEN the person approves it
        await pilot.press("Y")
        await settle(pilot)
        # THEN the engine cancelled it, and the person is told it was not sent
        prompt = app.engine.prompt(held)
        assert prompt is not None and prompt.state == "cancelled", prompt
        notes = [(n.severity, n.message) for n in app._notifications]
        assert not any("approved" in m for s, m in notes if s == "information"), notes
        assert any("not sent" in m and "QUEUE_FULL" in m for s, m in notes
                   if s in ("warning", "error")), notes
