"""The TUI's removal of an offered package (``d`` on the grants screen) removes the version
its dialog showed: one offered under the name while the removal waits for the operator
check is refused ``stale`` and stays offered (one offered while the dialog is open closes
the dialog: `test_a_grants_dialog_closes_when_its_question_is_gone`).

(Found in round 25: the dialog showed the content hash, the removal named only the name.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tests.conftest import manifest
from tui.app import ArrowgateApp
from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .test_consent_check_never_blocks_the_app import SlowCheck, _wait_started
from .world import open_engine


async def test_an_offer_replaced_while_its_removal_is_asked_stays(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    check = SlowCheck()
    app = ArrowgateApp(open_engine(tui_db, tui_clock), operator=check, start="grants")
    app.OPERATOR_RECHECK_S = 3600.0  # only the consent action's own look
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            await settle(pilot)
            table = app.screen.query_one("#packages", DataTable)
            table.focus()
            table.move_cursor(row=table.get_row_index("acme.reader"))
            await pilot.press("d")
            await settle(pilot)
            assert isinstance(app.screen, ConfirmScreen)
            shown = app.engine.state.packages["acme.reader"].hash
            assert shown in app.screen._body.plain
            pressed = asyncio.ensure_future(pilot.press("y"))
            await _wait_started(pilot, check)
            await app.engine.offer("acme.reader", manifest("acme.reader", {"fs.read": {}},
                                                           version="9.9.9"), {})
            now = app.engine.state.packages["acme.reader"].hash
        finally:
            check.release.set()
        await pressed
        await settle(pilot)
        assert app.engine.state.packages["acme.reader"].hash == now != shown
        last = app.engine.history.entries(package="acme.reader")[-1]
        assert (last["action"], last["accepted"], last["reason"]) == ("package.remove", False,
                                                                      "stale")
    app.engine.close()
