"""A prompt's row cut to an 80-column screen still says how many lines its text has.

The lists show a prompt's first line and, when it has more, "(N lines)" after it
(`tui.text.preview`), so a person scanning the list sees that "Tidy the docs" goes on
for 40 lines before opening it. The list then cut the cell to its column from the
right (`tui.widgets.fitted_table.cut`), and the count went first: at 80 columns the
row read "Tidy the docs and the…", the "(40 lines)" gone (the lower pane shows the
whole text; the row alone no longer told the text's size).

(Found by helper tui30 in round 30 and left.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text

from engine.app.replay import VirtualClock
from tui.text import preview
from tui.widgets.fitted_table import cut

from .conftest import settle
from .screen import screen_output
from .world import make_app, open_engine

TEXT = "Tidy the docs and then tell me\n" + "\n".join(["rm -rf ~/backups"] * 39)


async def _hold(path: Path, clock: VirtualClock) -> str:
    engine = open_engine(path, clock)
    try:
        decision = await engine.call("standup", "agents.prompt", "yolo", {"text": TEXT})
        assert decision.outcome == "held", decision
        return next(p.id for p in engine.prompts(state="held") if p.text == TEXT)
    finally:
        engine.close()


@pytest.mark.parametrize("screen", ["holds", "prompts"])
async def test_a_cut_row_still_says_how_many_lines(tui_db: Path, tui_clock: VirtualClock,
                                                    screen: str) -> None:
    prompt_id = await _hold(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        lines = screen_output(app)[0].splitlines()
    row = next(line for line in lines if line.split()[:1] == [prompt_id])
    # THEN the row is cut ("…") and still ends with the text's count of lines
    assert "Tidy" in row and "…" in row, row
    assert "(40 lines)" in row, row


def test_cutting_keeps_the_ending_and_cuts_before_it() -> None:
    cell = preview(TEXT, 40)
    assert cell.cell_len > 20
    shown = cut(cell, 20)
    assert shown.cell_len <= 20
    assert shown.plain.endswith("(40 lines)") and "…" in shown.plain, shown.plain
    assert shown.plain.startswith("Tidy")
    # A plain cell is cut at its end, as before; one too narrow for its ending too.
    assert cut(Text("abcdefghij"), 5).plain == "abcd…"
    assert cut(cell, 6).cell_len <= 6
