"""A grant whose yes waits for the operator check is not made when the cards it goes to
changed meanwhile: the grants screen's grant dialog and a card's request dialog name every
card of the package (a grant is the package's, SPEC §4.1), and a card added elsewhere
after the yes, before the check answered (seconds, under tmux), got the permission too.

Rule (SPEC §4.5: a person consents to what they were shown; as the hold approval looks at
the agent's mode again, round 33, and the update approval at what it grants, round 34):
the dialogs follow the cards while open (round 34), but a yes already given was carried
out whatever happened meanwhile. Now the app catches up with the store as the grant is
made and compares the cards with those the dialog named; changed, nothing is granted and
the person is told which cards it would go to now.

(Found by helper tui35 in round 35.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.app import ArrowgateApp
from tui.screens.confirm import ConfirmScreen
from tui.screens.grants import GrantsScreen

from .conftest import DialogClock, _settle
from .test_consent_check_never_blocks_the_app import SlowCheck, _wait_started
from .test_the_request_dialog_says_the_grant_now import _open, _reader
from .world import open_engine


async def _add_card(store: Path, clock: VirtualClock, node_id: str, package: str) -> None:
    other = open_engine(store, clock)
    try:
        await other.add_node({"id": node_id, "type": "card", "package": package},
                             workspace="w1")
    finally:
        other.close()


async def _grant_while_a_card_comes(store: Path, clock: VirtualClock, dialog_clock: DialogClock,
                                    *, add: bool) -> tuple[bool, list[str]]:
    """On the grants screen, grant terminals.write (revoked before) to acme.standup; while
    the operator check waits, another program adds a card of it (or does nothing).
    Returns whether it is granted, and the messages."""
    other = open_engine(store, clock)
    try:
        assert await other.revoke("acme.standup", "terminals.write")
    finally:
        other.close()
    check = SlowCheck()
    app = ArrowgateApp(open_engine(store, clock), operator=check, start="grants")
    app.OPERATOR_RECHECK_S = 3600.0  # only the consent action's own look
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        try:
            await _settle(pilot)
            screen = app.screen
            assert isinstance(screen, GrantsScreen)
            packages = screen.query_one("#packages", DataTable)
            packages.move_cursor(row=packages.get_row_index("acme.standup"))
            await _settle(pilot)
            perms = screen.query_one("#permissions", DataTable)
            perms.focus()
            perms.move_cursor(row=perms.get_row_index("terminals.write"))
            await _settle(pilot)
            await pilot.press("g")
            await _settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, ConfirmScreen), dialog
            dialog_clock.arm()
            assert dialog.armed and dialog.all_seen
            # WHEN the person says yes, and while the check waits a card is added elsewhere
            pressed = asyncio.ensure_future(pilot.press("Y", "y"))
            await _wait_started(pilot, check)
            if add:
                await _add_card(store, clock, "standup2", "acme.standup")
        finally:
            check.release.set()
        await pressed
        await _settle(pilot)
        granted = "terminals.write" in app.engine.state.grants.get("acme.standup", set())
        said = [n.message for n in app._notifications]
    app.engine.close()
    return granted, said


async def test_the_grant_is_not_made_for_cards_it_did_not_name(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock) -> None:
    """THEN nothing is granted, and the person is told which cards it would go to now."""
    granted, said = await _grant_while_a_card_comes(tui_db, tui_clock, dialog_clock, add=True)
    assert not granted, said
    assert any("not granted" in m and "standup2" in m for m in said), said


async def test_the_grant_with_the_cards_unchanged_is_made(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock) -> None:
    """The same grant with no card added goes through (no refusal of every grant that
    waited for the check)."""
    granted, said = await _grant_while_a_card_comes(tui_db, tui_clock, dialog_clock, add=False)
    assert granted, said
    assert any(m == "terminals.write granted to acme.standup" for m in said), said


async def _allow_while_a_card_comes(store: Path, clock: VirtualClock, dialog_clock: DialogClock,
                                    *, add: bool) -> tuple[bool, list[str], bool]:
    """In reader1's request dialog, allow clipboard.write; while the operator check waits,
    another program adds a card of acme.reader (or does nothing). Returns whether it is
    granted, the messages, and whether the dialog is still open."""
    await _reader(store, clock, granted=False)
    check = SlowCheck()
    app = ArrowgateApp(open_engine(store, clock), operator=check)
    app.OPERATOR_RECHECK_S = 3600.0  # only the consent action's own look
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        try:
            dialog = await _open(pilot, app)
            dialog_clock.arm()
            await _settle(pilot)
            assert dialog.armed and dialog.all_seen
            pressed = asyncio.ensure_future(pilot.press("y"))
            await _wait_started(pilot, check)
            if add:
                await _add_card(store, clock, "reader2", "acme.reader")
        finally:
            check.release.set()
        await pressed
        await _settle(pilot)
        granted = "clipboard.write" in app.engine.state.grants.get("acme.reader", set())
        said = [n.message for n in app._notifications]
        still_open = app.screen is dialog
        if still_open:
            assert not dialog.armed  # the text is said anew: the allow waits to be read
    app.engine.close()
    return granted, said, still_open


async def test_the_allow_is_not_made_for_cards_it_did_not_name(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock) -> None:
    """THEN nothing is granted, the person is told, and the dialog stays open, its text
    naming reader2."""
    granted, said, still_open = await _allow_while_a_card_comes(tui_db, tui_clock,
                                                                dialog_clock, add=True)
    assert not granted, said
    assert any("not allowed" in m and "reader2" in m for m in said), said
    assert still_open


async def test_the_allow_with_the_cards_unchanged_is_made(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock) -> None:
    granted, said, still_open = await _allow_while_a_card_comes(tui_db, tui_clock,
                                                                dialog_clock, add=False)
    assert granted, said
    assert not still_open
