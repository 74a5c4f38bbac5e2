"""When the package under the grants screen's cursor is gone (an offer withdrawn elsewhere),
the screen says so and which package the cursor rests on now.

Rule (as the holds screen's, round 19: a key meant for one row never acts unseen on
another): the packages table kept the cursor's row, not its package, so a person who
chose the offered acme.reader and pressed ``i`` for its install review, once another
program withdrew the offer, was shown the widening approval of acme.notes' pending
version (``i`` on a pending package), whose ``y`` approves it, with nothing said of the
change; ``d`` declined acme.notes' version.

(Found by helper tui32 in round 32.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.grants import GrantsScreen

from .conftest import settle
from .world import build, make_app, open_engine


async def _withdrawn_under_the_cursor(store: Path | str, tui_clock: VirtualClock) -> None:
    app = make_app(store, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        table = screen.query_one("#packages", DataTable)
        table.move_cursor(row=table.get_row_index("acme.reader"))
        await settle(pilot)
        # WHEN another program withdraws the offer the person has selected
        other = open_engine(store, tui_clock)
        try:
            await other.remove_package("acme.reader")
        finally:
            other.close()
        # (Until the table no longer shows it: the engine's state changes first, and the
        # screen draws it after, which on a loaded machine can be after `settle`.)
        for _ in polls():
            await pilot.pause(0.05)
            if "acme.reader" not in app.engine.state.packages \
                    and "acme.reader" not in [str(key.value) for key in table.rows]:
                break
        await settle(pilot)
        # THEN the person is told it is gone and which package the cursor is on now
        now = screen.selected_package()
        assert now is not None and now.name != "acme.reader"
        said = [n.message for n in app._notifications]
        assert any("acme.reader" in m and now.name in m for m in said), said
    app.engine.close()


async def test_the_selected_package_withdrawn_elsewhere_is_said(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    await _withdrawn_under_the_cursor(tui_db, tui_clock)


@pytest.mark.postgres
async def test_the_same_on_postgresql(pg_dsn: str, tmp_path: Path,
                                      tui_clock: VirtualClock) -> None:
    await build(pg_dsn, tmp_path / "ws", tui_clock)
    await _withdrawn_under_the_cursor(pg_dsn, tui_clock)
