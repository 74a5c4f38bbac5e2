"""A held prompt's approve key does nothing until its dialog has been on screen a moment.

The approve key is a key a person presses on purpose once they have read the
prompt; one typed ahead, together with the key that opens the dialog (``a``
then shift+y, or a key meant for the list that a dialog opened under), has
read nothing. Keys that arrive before the dialog has been shown for
`HoldScreen.ARM_S` seconds approve nothing.

(Found in round 19: ``a`` and shift+y pressed one after the other approved a
short held prompt whose dialog had been on screen for a single frame. Round 20:
the dialog's clock is the test's, since a loaded machine could take longer than
`HoldScreen.ARM_S` between the test's two keys.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.screens.hold import HoldScreen

from .conftest import DialogClock, _settle, settle
from .world import add_hostile, make_app


async def test_a_typed_ahead_approve_key_approves_nothing(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock) -> None:
    held = await add_hostile(tui_db, tui_clock, text="Short: rm -rf the backups.")
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#holds", DataTable)
        table.move_cursor(row=table.get_row_index(held))
        await settle(pilot)
        # WHEN the person types a and shift+y in one go
        await pilot.press("a", "Y")
        await _settle(pilot)  # not `settle`: it waits for the dialog to arm
        # THEN the dialog is open and nothing is approved
        state = app.engine.prompt(held).state  # type: ignore[union-attr]
        assert state == "held", f"a typed-ahead key approved: {state}"
        assert isinstance(app.screen, HoldScreen)
        # AND once it has been on screen a moment, shift+y approves
        dialog_clock.arm()
        await pilot.press("Y")
        await settle(pilot)
        assert app.engine.prompt(held).state in ("queued", "delivered")  # type: ignore[union-attr]
