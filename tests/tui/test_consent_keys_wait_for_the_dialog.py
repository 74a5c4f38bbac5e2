"""A consent dialog's yes does nothing until the dialog has been on screen a moment.

The grant, update, install and request dialogs ask before consent is given;
a yes typed ahead with the key that opened one (``g`` then shift+y) has read
none of it. Saying no, cancelling and closing work at once (they fail closed).

(Found in round 19: ``g`` and shift+y typed in one go granted a revoked
high-risk permission, and ``i`` and shift+y installed a high-risk package,
from dialogs drawn for a single frame.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.screens.review import ReviewScreen

from .conftest import DialogClock, _settle, settle
from .test_grants import _select, _with_reader_card
from .world import add_hostile, make_app


async def test_a_typed_ahead_yes_grants_nothing(tui_db: Path, tui_clock: VirtualClock,
                                                dialog_clock: DialogClock) -> None:
    await _with_reader_card(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        _select(app, "#packages", "acme.standup")
        await settle(pilot)
        _select(app, "#permissions", "terminals.write")
        await pilot.press("g", "Y")
        await _settle(pilot)
        assert "terminals.write" not in app.engine.state.grants["acme.standup"]
        dialog_clock.arm()
        await pilot.press("Y")
        await settle(pilot)
        assert "terminals.write" in app.engine.state.grants["acme.standup"]


async def test_a_typed_ahead_yes_installs_nothing(tui_db: Path, tui_clock: VirtualClock,
                                                  dialog_clock: DialogClock) -> None:
    await add_hostile(tui_db, tui_clock, text="short")
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        packages = app.screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.prompter"))
        await settle(pilot)
        await pilot.press("i", "Y")
        await _settle(pilot)
        assert not app.engine.state.packages["acme.prompter"].installed, "installed unread"
        assert isinstance(app.screen, ReviewScreen)
        dialog_clock.arm()
        await pilot.press("Y")
        await settle(pilot)
        assert app.engine.state.packages["acme.prompter"].installed
