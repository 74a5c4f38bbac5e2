"""A log row's chain that does not decode is shown in the detail as unreadable, with its stored text.

README "Durability and tamper evidence": a ``chain`` that is not JSON "is
shown empty (``chain`` null) with its stored text under ``unreadable``" — the
service, the history and the export keep that mark, and so does the TUI's row
detail: its causal chain reads UNREADABLE and the stored text is shown, never
"(not in a tool call)", a statement about the call that the altered row does
not support.

(Found by a helper: `describe_row` ignored ``row["unreadable"]`` and read the
null chain as "not in a tool call".)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.detail import DetailScreen

from .conftest import settle
from .screen import screen_output
from .world import make_app

STORED = '["standup", "claude"'  # cut short: not JSON


async def test_an_unreadable_chain_is_named_with_its_stored_text(tui_db: Path,
                                                          tui_clock: VirtualClock) -> None:
    conn = sqlite3.connect(tui_db)
    conn.execute("update log set chain = ? where seq = 1", [STORED])
    conn.commit()
    conn.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        screen.open_detail(1)
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.row.get("unreadable") == {"chain": STORED}  # the reader flagged it
        shown = screen_output(app)[0]
        assert "row 1 at" in shown
        assert "(not in a tool call)" not in shown, \
            "a chain altered by hand is drawn as 'not in a tool call'"
        assert "causal chain: UNREADABLE" in shown
        assert f"chain: {STORED}" in shown
