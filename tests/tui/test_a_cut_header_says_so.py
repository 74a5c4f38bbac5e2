"""A fitted table's column heading cut to its column's share ends with "…", as its cells do.

Rule (as the lists' cells, round 29: no part of a text reads as the whole of it): at 80
columns the grants screen's permissions table was headed "permiss" and "what a p", and its
consent history "time (", cut by the column's edge with nothing to say so (seen in the
Pilot screen, round 35), while a cut cell below read "cards.…".

(Left by helper tui34 in round 34; fixed by helper tui35 in round 35.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len

from engine.app.replay import VirtualClock
from tui.screens.grants import GrantsScreen
from tui.widgets.fitted_table import FittedTable

from .conftest import settle
from .screen import screen_output
from .world import make_app


@pytest.mark.parametrize("table_id", ["#packages", "#permissions", "#history"])
async def test_each_heading_is_whole_or_says_it_is_cut(
        tui_db: Path, tui_clock: VirtualClock, table_id: str) -> None:
    """Each heading fits its column, whole or ending with "…"."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        table = screen.query_one(table_id, FittedTable)
        for column, whole in zip(table.ordered_columns, table._labels, strict=True):
            shown = column.label.plain
            assert cell_len(shown) <= column.width, (shown, column.width)
            assert shown == whole or (shown.endswith("…") and whole.startswith(shown[:-1])), \
                (shown, whole)
    app.engine.close()


async def test_a_cut_heading_reads_cut_on_screen(tui_db: Path,
                                                 tui_clock: VirtualClock) -> None:
    """At 80 columns the permissions' headings are cut, and read so."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        heading = screen_output(app)[0].splitlines()[2]
        assert "permis…" in heading and "what a …" in heading, heading
        assert "permiss " not in heading and "what a p " not in heading, heading
    app.engine.close()
