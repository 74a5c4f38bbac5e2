"""A high-risk update's RISK line points the person at the diff where it is: below it.

(Found by helper tui25: the line read "Approve only if you trust it with what the lines
above say", above which stands only the dialog's title; the diff is below.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from engine import Engine, World
from engine.app.replay import VirtualClock
from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .world import make_app


async def test_the_risk_line_points_below(tui_db: Path, tui_clock: VirtualClock) -> None:
    engine = Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None))
    try:
        await engine.update("acme.standup", manifest={
            "name": "acme.standup", "version": "1.1.0", "tools": ["summarize"],
            "permissions": {"agents.prompt": {}, "terminals.write": {}, "agents.output": {},
                            "fs.write": {}}})
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#packages", DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index("acme.standup"))
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.risk is not None
        risk = str(dialog.query_one("#confirm-risk", Static).render())
        assert "fs.write" in risk and "below" in risk and "above" not in risk, risk
