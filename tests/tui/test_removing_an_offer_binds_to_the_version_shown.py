"""The TUI's removal of an offered package (``d`` on the grants screen) removes the version
its dialog showed: one offered under the name while the dialog was open is refused
``stale`` and stays offered.

(Found in round 25: the dialog showed the content hash, the removal named only the name.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tests.conftest import manifest
from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .world import make_app


async def test_an_offer_replaced_while_its_removal_is_asked_stays(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#packages", DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index("acme.reader"))
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        shown = app.engine.state.packages["acme.reader"].hash
        assert shown in app.screen._body.plain
        await app.engine.offer("acme.reader", manifest("acme.reader", {"fs.read": {}},
                                                       version="9.9.9"), {})
        now = app.engine.state.packages["acme.reader"].hash
        await pilot.press("y")
        await settle(pilot)
        assert app.engine.state.packages["acme.reader"].hash == now != shown
        last = app.engine.history.entries(package="acme.reader")[-1]
        assert (last["action"], last["accepted"], last["reason"]) == ("package.remove", False,
                                                                      "stale")
