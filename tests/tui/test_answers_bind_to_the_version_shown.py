"""The TUI's grant and its answer to a card's request name the version the dialog showed:
a version installed and approved while the dialog was open makes the answer ``stale``,
the refusal is shown, and nothing is granted.

(Found in round 23: the grant dialog and the request dialog called the engine with no
hash, so "y" granted the permission as the version approved in between declares it.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable

from engine import Engine, World
from engine.app.replay import VirtualClock
from tui.app import ArrowgateApp
from tui.screens.confirm import ConfirmScreen
from tui.screens.request import RequestScreen

from .conftest import settle
from .test_consent_check_never_blocks_the_app import SlowCheck, _wait_started

READER_1_1 = {"name": "acme.reader", "version": "1.1.0",
              "permissions": {"agents.output": {}, "clipboard.write": {"optional": True}}}


async def _with_reader_card(path: Path, clock: VirtualClock) -> None:
    engine = Engine.open(path, clock=clock, world=World(net=None, fs=None))
    try:
        await engine.install("acme.reader")
        await engine.add_node({"id": "reader1", "type": "card", "package": "acme.reader",
                               "visible": True}, workspace="w1")
    finally:
        engine.close()


async def _update_and_approve(engine: Engine) -> None:
    update = await engine.update("acme.reader", manifest=READER_1_1)
    await engine.approve("acme.reader", review_hash=update.pending_hash)


def _select(app: object, table_id: str, key: str) -> None:
    table = app.screen.query_one(table_id, DataTable)  # type: ignore[attr-defined]
    table.focus()
    table.move_cursor(row=table.get_row_index(key))


async def test_a_grant_confirmed_after_an_update_is_stale(tui_db: Path,
                                                          tui_clock: VirtualClock) -> None:
    """The version approved while the grant waits for the operator check (a dialog open
    when it is approved closes: `test_a_grants_dialog_closes_when_its_question_is_gone`)."""
    await _with_reader_card(tui_db, tui_clock)
    check = SlowCheck()
    app = ArrowgateApp(Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None)),
                       operator=check, start="grants")
    app.OPERATOR_RECHECK_S = 3600.0  # only the consent action's own look
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await settle(pilot)
            _select(app, "#packages", "acme.reader")
            await settle(pilot)
            _select(app, "#permissions", "clipboard.write")
            await pilot.press("g")
            await settle(pilot)
            assert isinstance(app.screen, ConfirmScreen)
            assert "1.0.0" in app.screen._body.plain  # the version shown
            pressed = asyncio.ensure_future(pilot.press("y"))
            await _wait_started(pilot, check)
            await _update_and_approve(app.engine)
        finally:
            check.release.set()
        await pressed
        await settle(pilot)
        assert "clipboard.write" not in app.engine.state.grants["acme.reader"]
        last = app.engine.history.entries(package="acme.reader")[-1]
        assert (last["action"], last["accepted"]) == ("grant", False)


async def test_a_request_answered_after_an_update_is_stale(tui_db: Path,
                                                           tui_clock: VirtualClock) -> None:
    """The version approved while the answer waits for the operator check (a dialog
    open when it is approved closes: `test_a_request_dialog_closes_when_its_card_goes`)."""
    await _with_reader_card(tui_db, tui_clock)
    check = SlowCheck()
    app = ArrowgateApp(Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None)),
                       operator=check)
    app.OPERATOR_RECHECK_S = 3600.0  # only the consent action's own look
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await settle(pilot)
            assert app.screen.select_node("reader1")  # type: ignore[attr-defined]
            await settle(pilot)
            await pilot.press("o")
            await settle(pilot)
            assert isinstance(app.screen, RequestScreen)
            pressed = asyncio.ensure_future(pilot.press("y"))
            await _wait_started(pilot, check)
            await _update_and_approve(app.engine)
        finally:
            check.release.set()
        await pressed
        await settle(pilot)
        assert "clipboard.write" not in app.engine.state.grants["acme.reader"]
        last = app.engine.history.entries(package="acme.reader")[-1]
        assert (last["action"], last["accepted"]) == ("request", False)
