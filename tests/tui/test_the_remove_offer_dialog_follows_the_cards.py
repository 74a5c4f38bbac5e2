"""The remove-offer dialog names the package's cards on a canvas as the engine has them
while it is open: a card added or removed elsewhere (another app, the service) is said
anew, read anew, and the yes waits.

Rule (SPEC §4.5: a person consents to what they were shown; as the grant and revoke
dialogs follow their package's cards): "Its cards on a canvas (reader1) stay there and
stay refused" was worked out once, as the dialog opened; a card added elsewhere was
never named, and a card removed elsewhere still was.

(Left by helper tui34 in round 34; found again by helper tui35 in round 35.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.confirm import ConfirmScreen
from tui.screens.grants import GrantsScreen

from .conftest import DialogClock, _settle
from .world import make_app, open_engine


async def _add(other: Engine) -> None:
    await other.add_node({"id": "reader2", "type": "card", "package": "acme.reader"},
                         workspace="w1")


async def _remove(other: Engine) -> None:
    await other.remove_node("reader1")


@pytest.mark.parametrize(("act", "before", "after"), [
    (_add, "(reader1)", "(reader1, reader2)"),
    (_remove, "(reader1)", "No card of it is on a canvas."),
], ids=["added", "removed"])
async def test_a_card_changed_elsewhere_is_said_and_the_yes_waits(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock,
        act: Callable[[Engine], Awaitable[None]], before: str, after: str) -> None:
    """A card of the offered package added or removed elsewhere while its remove dialog is
    open: the body names the cards as they are now, a message says it changed, and a
    yes pressed at once does nothing."""
    # GIVEN a card of the offered (not installed) acme.reader on the canvas
    setup = open_engine(tui_db, tui_clock)
    try:
        await setup.add_node({"id": "reader1", "type": "card", "package": "acme.reader"},
                             workspace="w1")
    finally:
        setup.close()
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        packages = screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.reader"))
        await _settle(pilot)
        await pilot.press("d")
        await _settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen), dialog
        dialog_clock.arm()
        assert dialog.armed and dialog.all_seen
        body = dialog.query_one("#confirm-body", Static)
        assert before in str(body.render()), str(body.render())
        # WHEN another program adds or removes a card of the package
        other = open_engine(tui_db, tui_clock)
        try:
            await act(other)
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if after in str(body.render()):
                break
        await _settle(pilot)
        # THEN the body names the cards as they are, the person is told, a yes waits
        assert after in str(body.render()), str(body.render())
        messages = [n.message for n in app._notifications]
        assert any("what the dialog says changed" in m for m in messages), messages
        assert not dialog.armed
        await pilot.press("y")
        await _settle(pilot)
        assert app.screen is dialog
        assert "acme.reader" in app.engine.state.packages
    app.engine.close()
