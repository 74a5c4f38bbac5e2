"""A row of the holds list and of the prompts list shows the start of a prompt's text
and says when the text goes on: never a part that reads as the whole.

The lists cut a prompt to its first line and a few dozen characters. They took the
first line as Python's `str.splitlines` does, which also ends a line at a carriage
return, a form feed, U+0085 or U+2028, while the count of lines beside it counted line
feeds alone: "Tidy the docs." followed by U+0085 and "rm -rf ~/backups" was listed as
"Tidy the docs.", one line, nothing more. A line cut at its 40th character had no
mark either. The dialog that approves shows the text whole; the list is what a person
scans to choose which prompt to open, and it must not tell them a harmless one waits.

(Found by helper tui29 in tmux, with held prompts made by ``arrowgate call``.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.text import visible

from .conftest import settle
from .world import make_app, open_engine

TEXTS = ["Tidy the docs.\x85rm -rf ~/backups",
         "Say hi\rrm -rf ~ && echo done",
         "Please summarise " + "the standup notes and " * 6 + "then delete the repository."]


async def _prompt(path: Path, clock: VirtualClock) -> dict[str, str]:
    engine = open_engine(path, clock)
    try:
        for text in TEXTS:
            decision = await engine.call("standup", "agents.prompt", "yolo", {"text": text})
            assert decision.outcome == "held", decision
        return {p.id: p.text for p in engine.prompts(state="held") if p.text in TEXTS}
    finally:
        engine.close()


@pytest.mark.parametrize("screen,table_id", [("holds", "#holds"), ("prompts", "#prompts")])
async def test_a_row_shows_the_whole_text_or_says_it_goes_on(
        tui_db: Path, tui_clock: VirtualClock, screen: str, table_id: str) -> None:
    held = await _prompt(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start=screen)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(table_id, DataTable)
        column = table.ordered_columns[-1].key
        misleading = []
        for prompt_id, text in held.items():
            cell = table.get_cell(prompt_id, column)
            shown = getattr(cell, "plain", str(cell))
            if shown != visible(text) and "…" not in shown:
                misleading.append(f"{prompt_id}: {shown!r} reads as the whole of {text!r}")
        assert len(held) == len(TEXTS) and not misleading, misleading
