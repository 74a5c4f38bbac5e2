"""The canvas's arrows table fits the screen: each arrow's ends are on screen, whole or
ending with "…", at 80 columns as at 160.

Rule (README "The TUI": the canvas shows each node's arrows, from and to; a person
decides what to cut by them): the table sized each column to its widest cell and the
screen's edge cut the rest, so at 80 columns a long arrow id pushed "to" off screen and
cut "from" with no mark — the arrow read as joining a node it does not.

(Found by helper tui30 in round 30 and left: `FittedTable` fits the holds and prompts
lists; the arrows table now too.)
"""

from __future__ import annotations

from pathlib import Path

from engine.app.replay import VirtualClock
from tui.screens.canvas import CanvasScreen

from .conftest import settle
from .screen import screen_output
from .world import make_app, open_engine

#: A card and an arrow whose ids are long enough to crowd an 80-column screen.
CARD = "standup-for-the-platform-team-weekly"
ARROW = "arrow-from-the-platform-standup-card-to-the-yolo-agent"


async def test_each_arrows_ends_are_on_screen_whole_or_cut_with_a_mark(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    engine = open_engine(tui_db, tui_clock)
    try:
        await engine.add_node({"id": CARD, "type": "card", "package": "acme.standup"},
                              workspace="w1")
        await engine.add_arrow({"id": ARROW, "from": CARD, "to": "yolo"})
    finally:
        engine.close()
    for size in ((80, 24), (160, 40)):
        app = make_app(tui_db, tui_clock)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, CanvasScreen)
            assert screen.select_node(CARD)
            await settle(pilot)
            lines = screen_output(app)[0].splitlines()
            # The arrows table's first row: two lines below the pane's title, from its column.
            at = next(i for i, line in enumerate(lines) if "Arrows" in line)
            column = lines[at].index("Arrows")
            header, row = lines[at + 1][column:], lines[at + 2][column:]
            shown = "\n".join([header, row])
            # THEN its header names both ends, its row shows the target, and the source
            # whole or cut with "…"
            assert "from" in header and "to" in header.split("from", 1)[1], (size, shown)
            assert "yolo" in row.split(), (size, shown)
            assert CARD in row or any(
                word.endswith("…") and CARD.startswith(word[:-1]) and len(word) > 1
                for word in row.split()), (size, shown)
