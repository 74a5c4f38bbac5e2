"""The help's list of keys fits its dialog: a "what it does" cut to its column ends with "…",
and the line under the list says the highlighted key's whole.

Rule (as the lists', round 29: no part of a text reads as the whole of it): at 120 columns
the help read "a  Approve…  hold.approve  Show the whole held prompt; approve it on", cut
by the dialog's edge mid-sentence with nothing to say so, and what approving takes (the
rest of that line) was off screen (seen in tmux, round 35).

(Found by helper tui35 in round 35.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from engine.app.replay import VirtualClock
from tui.screens.help import HelpScreen
from tui.screens.holds import HoldsScreen

from .conftest import settle
from .screen import screen_output
from .world import make_app


def _tooltip(binding_id: str) -> str:
    return next(b.tooltip for b in HoldsScreen.BINDINGS
                if not isinstance(b, tuple) and b.id == binding_id)


async def test_a_cut_description_says_so_and_is_said_whole_below(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        whole = _tooltip("hold.approve")
        # THEN the row reads whole or cut with "…", never cut by the dialog's edge
        row = next(line for line in screen_output(app)[0].splitlines()
                   if "hold.approve" in line)
        described = row.split("hold.approve", 1)[1].split("█")[0].strip()
        assert described == whole or (described.endswith("…")
                                      and whole.startswith(described[:-1])), row
        # AND with the cursor on it, the line below says it whole
        table = app.screen.query_one("#bindings", DataTable)
        table.move_cursor(row=table.get_row_index("hold.approve"))
        await settle(pilot)
        detail = " ".join(str(app.screen.query_one("#help-detail", Static).render()).split())
        assert whole in detail, detail
    app.engine.close()
