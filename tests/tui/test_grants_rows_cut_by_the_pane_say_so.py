"""The grants screen's packages, permissions and consent history fit their pane: a cell cut to its
column's share ends with "…", never at the pane's edge mid-word with nothing to say so.

Rule (as the holds, prompts and arrows lists', round 29: no part of a text reads as the
whole of it): at 130 columns the permissions table's "what a person sees" read "Read what
agents and termi", and the history's result "widened: +agents.prompt; widened: +", cut by
the pane's edge (seen in tmux); at 80 columns the column a person reads was not on
screen at all, and the packages table, scrolled sideways to its cursor by ``end``, showed
"e.big" and "e.notes" for acme.big and acme.notes.

(Found by helper tui34 in round 34.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.screens.grants import GrantsScreen
from tui.widgets.fitted_table import FittedTable

from .conftest import settle
from .screen import screen_output
from .world import make_app


@pytest.mark.parametrize("size", [(80, 24), (130, 30)])
@pytest.mark.parametrize("table_id", ["#packages", "#permissions", "#history"])
async def test_the_columns_fit_and_a_cut_cell_says_so(
        tui_db: Path, tui_clock: VirtualClock, size: tuple[int, int], table_id: str) -> None:
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        packages = screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.standup"))
        await settle(pilot)
        table = screen.query_one(table_id, DataTable)
        assert table.row_count
        used = sum(c.get_render_width(table) for c in table.ordered_columns)
        assert used <= table.scrollable_content_region.width, (used, table.size)
        assert isinstance(table, FittedTable)
        last = table.ordered_columns[-1]
        for row in table.ordered_rows:
            shown = table.get_cell(row.key, last.key).plain
            whole = table._rows[str(row.key.value)][-1].plain
            assert cell_len(shown) <= last.width
            assert shown == whole or shown.endswith("…"), (shown, whole)
    app.engine.close()


async def test_the_packages_are_named_whole_after_end(tui_db: Path,
                                                      tui_clock: VirtualClock) -> None:
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#packages", DataTable)
        table.focus()
        await pilot.press("end")
        await settle(pilot)
        assert table.scroll_x == 0, table.scroll_x
        shown = screen_output(app)[0]
        assert "acme.standup" in shown and " e.standup" not in shown, shown
    app.engine.close()
