"""The update dialog's "approving grants" lines follow the package's grants while it is
open, and an approval whose grants are no longer the ones shown is not made.

Rule (SPEC §4.4: widening needs consent; §4.5: a person consents to what they were
shown): the lines were worked out when the dialog opened. A revoke made elsewhere while
it was open (another program on the same store) left them saying "Approving grants:
network: +b.example.com" of an approval that grants none of it; the approve key took a yes
to the old lines. Now the lines are said anew when the store changes and the yes waits to
be read again; and the approval, made after the operator check (seconds, under tmux),
looks at the grants again: changed since the lines were said, nothing is approved and
the person is told why. (A grant cannot be made while a version is pending: the engine
refuses it, PackagePending, so a revoke is the change there is.)

(Left by helper tui33 in round 33; fixed by helper tui33b.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Static

from engine import file_digests
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.app import ArrowgateApp
from tui.screens.update import UpdateScreen

from .conftest import DialogClock, _settle
from .test_consent_check_never_blocks_the_app import SlowCheck, _wait_started
from .world import make_app, open_engine

OLD: dict[str, Any] = {"name": "acme.x", "version": "1.0.0", "permissions": {
    "network": {"hosts": ["a.example.com"]}, "agents.output": {}}}
NEW = {**OLD, "version": "1.1.0", "permissions": {
    **OLD["permissions"], "network": {"hosts": ["a.example.com", "b.example.com"]}}}
SAID = "Approving grants: network: +b.example.com."
NOW = ("Approving grants none of what is widened.\nApproving does not grant: network: "
       "+b.example.com (network was revoked and stays revoked).")


async def _pending(store: Path, clock: VirtualClock) -> None:
    """acme.x installed with network granted, and a version widening network's hosts."""
    engine = open_engine(store, clock)
    try:
        await engine.offer("acme.x", OLD, file_digests({
            "manifest.json": json.dumps(OLD, sort_keys=True), "index.js": "// acme.x"}))
        await engine.install("acme.x")
        await engine.update("acme.x", manifest=NEW)
    finally:
        engine.close()


async def _revoke_elsewhere(store: Path, clock: VirtualClock) -> None:
    other = open_engine(store, clock)
    try:
        assert await other.revoke("acme.x", "network")
    finally:
        other.close()


async def _open_dialog(pilot: Any) -> UpdateScreen:
    app = pilot.app
    await _settle(pilot)
    table = app.screen.query_one("#packages", DataTable)
    table.focus()
    table.move_cursor(row=table.get_row_index("acme.x"))
    await _settle(pilot)
    await pilot.press("u")
    await _settle(pilot)
    dialog = app.screen
    assert isinstance(dialog, UpdateScreen)
    return dialog


def _body(dialog: UpdateScreen) -> str:
    return str(dialog.query_one("#confirm-body", Static).render())


async def _seen(pilot: Any, app: ArrowgateApp, dialog: UpdateScreen) -> None:
    """Until the app has read the revoke made elsewhere and the dialog has heard of it
    (the app may read the store a look before its screens do, `ArrowgateApp.watch_store`);
    bounded, for a dialog that never hears of it."""
    for _ in polls():
        await pilot.pause(0.05)
        if "network" not in app.engine.state.grants["acme.x"] and NOW in _body(dialog):
            break
    await _settle(pilot)


async def test_the_lines_follow_a_revoke_and_the_yes_waits(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock) -> None:
    """GIVEN the dialog open and armed, saying approving grants network's new host, WHEN
    another program revokes network, THEN the dialog says approving grants none of it, a
    message says it changed, a yes pressed at once approves nothing, AND a yes once the
    dialog has been read again approves, network staying revoked."""
    await _pending(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        dialog = await _open_dialog(pilot)
        dialog_clock.arm()
        assert dialog.armed and dialog.all_seen
        assert SAID in _body(dialog), _body(dialog)
        # WHEN another program revokes network
        await _revoke_elsewhere(tui_db, tui_clock)
        await _seen(pilot, app, dialog)
        # THEN
        assert NOW in _body(dialog), _body(dialog)
        assert SAID not in _body(dialog)
        said = [n.message for n in app._notifications]
        assert any("what approving grants changed" in m for m in said), said
        assert not dialog.armed
        await pilot.press("y")
        await _settle(pilot)
        assert app.screen is dialog
        assert app.engine.state.packages["acme.x"].is_pending
        # AND read again, the yes approves what the dialog says now
        dialog_clock.arm()
        await pilot.press("y")
        await _settle(pilot)
        assert not app.engine.state.packages["acme.x"].is_pending
        assert "network" not in app.engine.state.grants["acme.x"]
    app.engine.close()


async def _approve_while_revoked(store: Path, clock: VirtualClock, *, revoke: bool
                                 ) -> tuple[bool, list[str]]:
    """Approve acme.x's update; while the operator check waits, another program revokes
    network (or nothing happens). Returns whether the version is still pending and the
    messages."""
    await _pending(store, clock)
    check = SlowCheck()
    app = ArrowgateApp(open_engine(store, clock), operator=check, start="grants")
    app.OPERATOR_RECHECK_S = 3600.0  # only the consent action's own look
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        try:
            dialog = await _open_dialog(pilot)
            for _ in polls():
                if dialog.armed and dialog.all_seen:
                    break
                await pilot.pause(0.05)
            assert SAID in _body(dialog), _body(dialog)
            # WHEN the person approves, and while the check waits network is revoked
            pressed = asyncio.ensure_future(pilot.press("y"))
            await _wait_started(pilot, check)
            if revoke:
                await _revoke_elsewhere(store, clock)
        finally:
            check.release.set()
        await pressed
        await _settle(pilot)
        pending = app.engine.state.packages["acme.x"].is_pending
        said = [n.message for n in app._notifications]
    app.engine.close()
    return pending, said


async def test_an_approval_after_a_revoke_is_not_made(tui_db: Path,
                                                      tui_clock: VirtualClock) -> None:
    """THEN the version is still pending, and the person is told why and what approving
    grants now."""
    pending, said = await _approve_while_revoked(tui_db, tui_clock, revoke=True)
    assert pending, said
    assert any("not approved" in m and "what approving grants changed" in m
               and "network was revoked and stays revoked" in m for m in said), said


async def test_an_approval_with_the_grants_unchanged_is_made(tui_db: Path,
                                                             tui_clock: VirtualClock) -> None:
    """The same approval with the grants as shown goes through."""
    pending, said = await _approve_while_revoked(tui_db, tui_clock, revoke=False)
    assert not pending, said
