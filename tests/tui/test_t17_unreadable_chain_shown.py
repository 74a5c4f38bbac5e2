"""A log row's field that does not decode is shown as damaged, not as a plain value.

(t17) README "Durability and tamper evidence": a ``chain`` that is not JSON "is
shown empty (``chain`` null) with its stored text under ``unreadable``" — the
service, the history and the export keep that mark. The TUI's row detail
(`describe_row`, tui/screens/detail.py:33) never looks at ``row["unreadable"]``:
it reads the null as "- (not in a tool call)", a statement about the call that
is false (the row was altered), and shows nothing of what is stored there.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.detail import DetailScreen

from .conftest import settle
from .screen import screen_output
from .world import make_app

STORED = '["standup", "claude"'  # cut short: not JSON


async def test_an_unreadable_chain_is_named_in_the_detail(tui_db: Path,
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
        assert "unreadable" in shown or json.dumps(STORED)[1:-1] in shown or STORED in shown
