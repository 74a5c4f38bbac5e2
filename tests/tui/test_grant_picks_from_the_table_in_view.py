"""``g`` grants only the permission chosen in the permissions table the person is in:
pressed from the packages table, it moves there and says so, as ``v`` (revoke) does.
The permissions table's cursor, left on a row earlier, is not the person's choice.

(Found in round 24: ``g`` from the packages table opened the grant dialog for whatever
row the permissions table's cursor was last left on.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from engine import Engine, World
from engine.app.replay import VirtualClock
from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .world import make_app


async def test_g_from_the_packages_table_grants_nothing(tui_db: Path,
                                                        tui_clock: VirtualClock) -> None:
    engine = Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None))
    try:
        await engine.install("acme.reader")
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        packages = app.screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.reader"))
        await settle(pilot)
        permissions = app.screen.query_one("#permissions", DataTable)
        permissions.move_cursor(row=permissions.get_row_index("clipboard.write"))
        packages.focus()
        await settle(pilot)
        # WHEN the person, in the packages table, presses g
        await pilot.press("g")
        await settle(pilot)
        # THEN no grant is offered; the permissions table takes the focus, with a word why
        assert not isinstance(app.screen, ConfirmScreen)
        assert permissions.has_focus
        assert any("then press g" in n.message for n in app._notifications)
        # AND from there, g offers the permission under its cursor
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "clipboard.write" in app.screen._body.plain
