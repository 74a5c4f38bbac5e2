"""A card's request dialog says each permission's grant as it is now, while it is open.

Rule (SPEC §4.2: the person answers a card's ask; §4.5: a person consents to what they
were shown): the dialog's "now" column (granted / not granted) was filled when it opened
and never again. A permission revoked elsewhere while it was open still read "granted",
so an allow meant as a no-op granted it anew; one granted elsewhere still read "not
granted", and a deny of it would take nothing back. The answer keys looked at the live
grants, but the person read stale words. Now the column follows the grants, a message
says what changed, and a change under the cursor makes the allow key wait to be read
again. A deny that waited for the operator check while the permission was granted
elsewhere is said as the engine did it: recorded, the grant kept.

(Left by helper tui33 in round 33; fixed by helper tui33b.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.app import ArrowgateApp
from tui.screens.request import RequestScreen

from .conftest import DialogClock, _settle
from .test_consent_check_never_blocks_the_app import SlowCheck, _wait_started
from .world import make_app, open_engine


async def _reader(store: Path, clock: VirtualClock, *, granted: bool) -> None:
    """acme.reader installed, its card reader1 on screen, clipboard.write (optional)
    granted or not."""
    engine = open_engine(store, clock)
    try:
        await engine.install("acme.reader")
        await engine.add_node({"id": "reader1", "type": "card", "package": "acme.reader",
                               "visible": True}, workspace="w1")
        if granted:
            await engine.grant("acme.reader", "clipboard.write")
    finally:
        engine.close()


async def _open(pilot: Pilot[Any], app: ArrowgateApp) -> RequestScreen:
    await _settle(pilot)
    assert app.screen.select_node("reader1")  # type: ignore[attr-defined]
    await _settle(pilot)
    await pilot.press("o")
    await _settle(pilot)
    dialog = app.screen
    assert isinstance(dialog, RequestScreen)
    assert dialog.selected() == "clipboard.write"
    return dialog


def _now(dialog: RequestScreen) -> str:
    return str(dialog.query_one("#requests", DataTable).get_row("clipboard.write")[2])


async def _elsewhere(store: Path, clock: VirtualClock, app: ArrowgateApp, pilot: Pilot[Any], *,
                     grant: bool) -> None:
    """Another program grants (or revokes) clipboard.write; wait until the app has it."""
    other: Engine = open_engine(store, clock)
    try:
        if grant:
            await other.grant("acme.reader", "clipboard.write")
        else:
            assert await other.revoke("acme.reader", "clipboard.write")
    finally:
        other.close()
    # Until the dialog has heard of it too (the app may read the store a look before
    # its screens do, `ArrowgateApp.watch_store`); bounded, for one that never does.
    word = "granted" if grant else "not granted"
    for _ in polls():
        await pilot.pause(0.05)
        if ("clipboard.write" in app.engine.state.grants["acme.reader"]) == grant \
                and isinstance(app.screen, RequestScreen) and _now(app.screen) == word:
            break
    await _settle(pilot)


async def test_a_revoke_elsewhere_is_shown_and_the_allow_waits(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock) -> None:
    """GIVEN the dialog open and armed on clipboard.write, granted, WHEN another program
    revokes it, THEN the column says "not granted", a message says so, an allow pressed
    at once grants nothing, AND once read again an allow grants it."""
    await _reader(tui_db, tui_clock, granted=True)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        dialog = await _open(pilot, app)
        dialog_clock.arm()
        assert dialog.armed and dialog.all_seen
        assert _now(dialog) == "granted"
        await _elsewhere(tui_db, tui_clock, app, pilot, grant=False)
        assert _now(dialog) == "not granted"
        said = [n.message for n in app._notifications]
        assert any("clipboard.write is not granted now" in m for m in said), said
        assert not dialog.armed
        await pilot.press("y")
        await _settle(pilot)
        assert app.screen is dialog
        assert "clipboard.write" not in app.engine.state.grants["acme.reader"]
        dialog_clock.arm()
        await pilot.press("y")
        await _settle(pilot)
        assert "clipboard.write" in app.engine.state.grants["acme.reader"]
    app.engine.close()


async def test_a_grant_elsewhere_is_shown_and_the_deny_says_to_revoke(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """GIVEN the dialog open on clipboard.write, not granted, WHEN another program grants
    it, THEN the column says "granted" and the keys offer no deny (it would take nothing
    back)."""
    await _reader(tui_db, tui_clock, granted=False)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        dialog = await _open(pilot, app)
        assert _now(dialog) == "not granted"
        await _elsewhere(tui_db, tui_clock, app, pilot, grant=True)
        assert _now(dialog) == "granted"
        said = [n.message for n in app._notifications]
        assert any("clipboard.write is granted now" in m for m in said), said
        keys = str(dialog.query_one("#request-keys").render())
        assert "granted: revoke it on the grants screen" in keys, keys
    app.engine.close()


async def test_a_deny_that_waited_while_it_was_granted_says_so(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """GIVEN the dialog on clipboard.write, not granted, WHEN the person denies it and,
    while the operator check waits, another program grants it, THEN the person is told
    it stays granted (the engine recorded the deny and kept the grant), not "denied"."""
    await _reader(tui_db, tui_clock, granted=False)
    check = SlowCheck()
    app = ArrowgateApp(open_engine(tui_db, tui_clock), operator=check)
    app.OPERATOR_RECHECK_S = 3600.0  # only the consent action's own look
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        try:
            dialog = await _open(pilot, app)
            pressed = asyncio.ensure_future(pilot.press("n"))
            await _wait_started(pilot, check)
            other = open_engine(tui_db, tui_clock)
            try:
                await other.grant("acme.reader", "clipboard.write")
            finally:
                other.close()
        finally:
            check.release.set()
        await pressed
        await _settle(pilot)
        assert app.screen is not dialog
        said = [n.message for n in app._notifications]
        assert "clipboard.write" in app.engine.state.grants["acme.reader"]
        assert not any(m.endswith("clipboard.write denied") for m in said), said
        assert any("denied, but it is granted to acme.reader" in m for m in said), said
    app.engine.close()
