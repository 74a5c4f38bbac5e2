"""A consent dialog's key hints name the keys its bindings have now, keymap applied.

(Found by a helper, u15: the hints were fixed text, so a keymap that moved
``hold.confirm_approve`` to esc left the dialog saying "esc cancel" while esc
approved.)
Approval on esc is refused since round 25 (`tui.keymap`); the hints are shown here on
another key moved the same way.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from engine.app.replay import VirtualClock
from tui.screens.confirm import ConfirmScreen
from tui.screens.hold import HoldScreen

from .conftest import open_hold, settle
from .world import add_hostile, make_app


async def test_the_hold_dialog_names_the_remapped_keys(tui_db: Path,
                                                       tui_clock: VirtualClock) -> None:
    held = await add_hostile(tui_db, tui_clock, text="Short and sweet.")
    app = make_app(tui_db, tui_clock, start="holds",
                   keymap={"hold.confirm_approve": "ctrl+a", "hold.cancel": "n,q"})
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_hold(pilot, held)
        assert isinstance(dialog, HoldScreen) and dialog.all_seen
        hints = str(dialog.query_one("#hold-keys", Static).render())
        assert "^a approve" in hints and "n / q cancel" in hints, hints
        assert "esc cancel" not in hints and "shift+y" not in hints


async def test_default_hints_read_as_before(tui_db: Path, tui_clock: VirtualClock) -> None:
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.push_screen(ConfirmScreen("Revoke?", "body", verb="revoke", risk="high"))
        await settle(pilot)
        hints = str(app.screen.query(".dialog-keys").last().render())
        assert hints == "shift+y revoke    n / esc cancel", hints
