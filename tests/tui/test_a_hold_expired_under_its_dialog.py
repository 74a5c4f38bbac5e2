"""A hold whose time runs out while its dialog is open cannot be approved from it.

Rule (SPEC §7): silence is never consent, and a hold not answered within its timeout
expires: the dialog still open over it, its approve key pressed once the time is up,
approves nothing; the person is told the hold expired and the dialog closes.
"""

from __future__ import annotations

from pathlib import Path

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.hold import HoldScreen
from tui.screens.holds import HoldsScreen

from .conftest import open_hold, settle
from .world import add_hostile, make_app


async def test_a_hold_expired_under_its_open_dialog_is_not_approved(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    held = await add_hostile(tui_db, tui_clock, text="Short: rm -rf the backups.")
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        dialog = await open_hold(pilot, held)
        assert isinstance(dialog, HoldScreen) and dialog.all_seen
        # WHEN the hold's time runs out while its dialog is open, and the person approves
        tui_clock.t += 301
        if isinstance(app.screen, HoldScreen):
            await pilot.press("Y")
        for _ in polls():
            await pilot.pause(0.05)
            if not isinstance(app.screen, HoldScreen):
                break
        await settle(pilot)
        # THEN nothing was approved: the hold expired, the person is told, the dialog closed
        prompt = app.engine.prompt(held)
        assert prompt is not None and prompt.state == "expired", prompt
        said = [n.message for n in app._notifications]
        assert any(held in m and "expired" in m for m in said), said
        assert [type(s) for s in app.screen_stack] == [HoldsScreen]
