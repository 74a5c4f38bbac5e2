"""The canvas's node list shows a node's name (an agent's, a terminal's) and a note's text
whole, or cut with "…": what a row shows never reads as the whole of it.

Rule (README "The TUI": a list's cell cut to its column ends with "…"; the brief of round
32: nothing a decision depends on is cut unseen): the node list is where a person tells
one agent from another before wiring a card to it. Every name was cut to 20 characters
before the column fitted it, so where the column is wider (a wide terminal) "Claude —
sandbox only, no network" read as "Claude — sandbox onl", padded with no mark, and a
note's first line stood for the whole note.

(Found by helper tui32 in round 32.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import VirtualClock

from .conftest import settle
from .screen import screen_output
from .world import make_app, open_engine

NAME = "Claude — sandbox only, no network"
NOTE = "ship it\nthen delete the staging database"


@pytest.mark.parametrize("width", [80, 250])
async def test_a_long_name_or_note_is_whole_or_marked_cut(
        tui_db: Path, tui_clock: VirtualClock, width: int) -> None:
    # GIVEN an agent whose name is longer than 20 characters, and a note of two lines
    engine = open_engine(tui_db, tui_clock)
    try:
        await engine.add_node({"id": "a-long", "type": "agent", "name": NAME}, workspace="w1")
        await engine.add_node({"id": "n-long", "type": "note", "text": NOTE}, workspace="w1")
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(pilot)
        lines = screen_output(app)[0].splitlines()
        for kind, node, whole in (("agent", "a-long", NAME), ("note", "n-long", NOTE)):
            row = next(line for line in lines if line.split()[:2] == [kind, node])
            # THEN the row holds all of it, or the part it shows is followed by "…"
            assert whole in row or any(f"{whole[:cut]}{mark}" in row
                                       for cut in range(1, len(whole))
                                       for mark in ("…", " …")), (node, row)
    app.engine.close()
