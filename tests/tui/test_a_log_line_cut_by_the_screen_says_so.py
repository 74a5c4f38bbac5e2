"""A log line that goes on past the screen's right edge ends with "…" there.

Rule (SPEC §7's spirit, README "The TUI": what a row shows never reads as the whole of
it): the arrow log draws each row's payload whole (up to 2,000 cells) and scrolls
sideways to read it, and the screen's edge cut it with no mark — at 80 columns a prompt
"Tidy the docs and then rm -rf ~/backups" read as "Tidy the docs and then". The row's
detail shows it whole; the line now says it goes on.

(Found by helper tui30 in round 30 and left.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import VirtualClock

from .conftest import settle
from .screen import screen_output
from .world import make_app, open_engine

TEXT = "Tidy the docs and then " + "and then " * 12 + "rm -rf ~/backups"


# 16 lines: the log overflows its pane, and a vertical scrollbar takes the right edge.
@pytest.mark.parametrize("size", [(80, 24), (80, 16)])
async def test_a_payload_past_the_edge_ends_with_a_mark_and_a_short_one_does_not(
        tui_db: Path, tui_clock: VirtualClock, size: tuple[int, int]) -> None:
    engine = open_engine(tui_db, tui_clock)
    try:
        decision = await engine.call("standup", "agents.prompt", "claude", {"text": TEXT})
        assert decision.outcome in {"ok", "queued"}, decision
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        lines = screen_output(app)[0].splitlines()
        long_row = next(line for line in lines if "Tidy the" in line)
        # THEN the line's last cell (before the scrollbar, if any) is the mark
        assert long_row.rstrip(" ▏▕▌▐█▁▂▃▄▅▆▇").endswith("…"), "\n".join(lines)
        short = next((line for line in lines if "make test" in line), None)
        assert short is None or "…" not in short.split("make test", 1)[1], short
