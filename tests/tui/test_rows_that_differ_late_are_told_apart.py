"""Held prompts whose texts differ only after their 40th character are told apart in the
lists on a screen wide enough to show it.

Rule (SPEC §7: a person chooses which held prompt to open and approve by what the list
shows): each row held its text's first 40 characters (60 in the prompts list) whatever
the width, so at 160 columns three holds "Please run: rm -rf /tmp/x … #0, #1, #2" read
the same, with half the screen empty beside them. Now a row holds more of the text
(`tui.text.ROW_TEXT`) and the list cuts it to its column's share, "…" marking the cut.

(Found by helper tui34 in round 34, in tmux at 160 columns.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from engine.app.replay import VirtualClock

from .conftest import settle
from .world import make_app, open_engine

HEAD = "Please run the cleanup of the build folder, then: "
TEXTS = [HEAD + "rm -rf ./build", HEAD + "rm -rf ~/backups"]


@pytest.mark.parametrize("screen,table_id", [("holds", "#holds"), ("prompts", "#prompts")])
async def test_texts_that_differ_late_read_apart(tui_db: Path, tui_clock: VirtualClock,
                                                 screen: str, table_id: str) -> None:
    engine = open_engine(tui_db, tui_clock)
    try:
        for text in TEXTS:
            decision = await engine.call("standup", "agents.prompt", "yolo", {"text": text})
            assert decision.outcome == "held", decision
        ids = [p.id for p in engine.prompts(state="held") if p.text in TEXTS]
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start=screen)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(table_id, DataTable)
        column = table.ordered_columns[-1].key
        shown = [getattr(cell, "plain", str(cell))
                 for cell in (table.get_cell(i, column) for i in ids)]
        assert shown == TEXTS, shown
    app.engine.close()
