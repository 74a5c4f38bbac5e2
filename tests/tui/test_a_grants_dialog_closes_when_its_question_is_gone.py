"""The grants screen's confirmations (revoke, grant, decline a pending version, remove an
offer) close, saying why, once what they ask is done or made void elsewhere (another
app, the service): a yes is never left offered for a question that is gone.

Rule (SPEC §4.5: a person consents to what they were shown; as the hold dialog does for
a prompt answered elsewhere, and the update dialog for its version): "Revoke network
from acme.x?" stayed open after another program revoked it, and its yes then said
"network revoked from acme.x" of a revoke this app never made; "Grant …?" stayed
open on a permission granted meanwhile; "Decline the pending version …?" on a version
approved meanwhile (its yes then refused as ``stale``).

(Found by helper tui34 in round 34.)
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


async def _revoked_before(store: Path, clock: VirtualClock) -> None:
    """terminals.write revoked from acme.standup: a grant may give it back."""
    other = open_engine(store, clock)
    try:
        assert await other.revoke("acme.standup", "terminals.write")
    finally:
        other.close()


async def _revoke(other: Engine) -> None:
    assert await other.revoke("acme.standup", "agents.output")


async def _grant(other: Engine) -> None:
    await other.grant("acme.standup", "terminals.write")


async def _approve(other: Engine) -> None:
    pending = other.pending_update("acme.notes")
    assert pending is not None
    await other.approve("acme.notes", review_hash=pending.pending_hash)


async def _install(other: Engine) -> None:
    await other.install("acme.reader")


CASES = [
    # package, permission (or None), key, done elsewhere, the reason said
    ("acme.standup", "agents.output", "v", _revoke, "agents.output was revoked from acme.standup"),
    ("acme.standup", "terminals.write", "g", _grant, "terminals.write was granted to acme.standup"),
    ("acme.notes", None, "d", _approve, "the pending version of acme.notes"),
    ("acme.reader", None, "d", _install, "acme.reader was installed"),
]


@pytest.mark.parametrize(("package", "permission", "key", "act", "said"), CASES,
                         ids=["revoke", "grant", "decline", "remove"])
async def test_the_dialog_closes_and_says_why(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock, package: str,
        permission: str | None, key: str, act: Callable[[Engine], Awaitable[None]],
        said: str) -> None:
    await _revoked_before(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        packages = screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index(package))
        await _settle(pilot)
        if permission is not None:
            perms = screen.query_one("#permissions", DataTable)
            perms.focus()
            perms.move_cursor(row=perms.get_row_index(permission))
            await _settle(pilot)
        await pilot.press(key)
        await _settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen), dialog
        dialog_clock.arm()
        assert dialog.armed and dialog.all_seen
        history = len(app.engine.history.entries())
        # WHEN another program does it, or makes it void
        other = open_engine(tui_db, tui_clock)
        try:
            await act(other)
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if app.screen is not dialog:
                break
        await _settle(pilot)
        # THEN the dialog is closed, and the person is told why
        assert app.screen is screen, app.screen
        messages = [n.message for n in app._notifications]
        assert any(said in m and "nothing was done here" in m for m in messages), messages
        # AND the yes keys do nothing here: the app itself recorded nothing
        await pilot.press("y", "Y")
        await _settle(pilot)
        assert len(app.engine.history.entries()) == history + 1
    app.engine.close()


@pytest.mark.parametrize(("permission", "key"), [("terminals.write", "g"),
                                                 ("agents.output", "v")],
                         ids=["grant", "revoke"])
async def test_a_card_added_elsewhere_is_named_and_the_yes_waits(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock, permission: str,
        key: str) -> None:
    """The grant and revoke dialogs name every card of the package (the grant is the
    package's). A card added elsewhere while one was open was not named, and a grant's
    yes gave the permission to it too: now the body is said anew and read anew, a
    message says why, and the yes waits."""
    await _revoked_before(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        packages = screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.standup"))
        await _settle(pilot)
        perms = screen.query_one("#permissions", DataTable)
        perms.focus()
        perms.move_cursor(row=perms.get_row_index(permission))
        await _settle(pilot)
        await pilot.press(key)
        await _settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen), dialog
        dialog_clock.arm()
        assert dialog.armed and dialog.all_seen
        body = dialog.query_one("#confirm-body", Static)
        assert "standup2" not in str(body.render())
        # WHEN another program adds a card of the package
        other = open_engine(tui_db, tui_clock)
        try:
            await other.add_node({"id": "standup2", "type": "card",
                                  "package": "acme.standup"}, workspace="w1")
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if "standup2" in str(body.render()):
                break
        await _settle(pilot)
        # THEN the body names it, the person is told, and a yes at once does nothing
        assert "standup2" in str(body.render()), str(body.render())
        messages = [n.message for n in app._notifications]
        assert any("what the dialog says changed" in m for m in messages), messages
        assert not dialog.armed
        await pilot.press("y", "Y")
        await _settle(pilot)
        assert app.screen is dialog
    app.engine.close()
