"""A log row's detail keeps each field on one line: a card cannot add lines to it.

Only the payload is drawn over several lines; every other field shows a line
break as ``␊`` (tui/text.py), so the call name of an unknown call or the target
of a denied call — both logged as the card sent them — cannot draw a line of
the card's making (``outcome:   approved`` under a denied row's real outcome,
``approver:  operator``).

(Found by a helper: `DetailScreen` drew the whole detail with
``plain(..., multiline=True)``, a card's line break as a real one.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.detail import DetailScreen
from tui.widgets.log_view import LogView

from .conftest import settle
from .screen import screen_output
from .world import make_app, open_engine


@pytest.mark.parametrize(("call", "target", "forged"), [
    ("agents.prompt\noutcome:   approved", "claude", "outcome:   approved"),
    ("agents.prompt", "claude\napprover:  operator", "approver:  operator"),
], ids=["call", "target"])
async def test_a_cards_line_break_adds_no_line_to_the_detail(tui_db: Path, tui_clock: VirtualClock,
                                                 call: str, target: str, forged: str) -> None:
    engine = open_engine(tui_db, tui_clock)
    try:
        decision = await engine.call("standup", call, target, {"text": "hi"})
        assert decision.outcome == "denied"
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        view = screen.query_one(LogView)
        screen.open_detail(view.index.seq_at(view.count - 1))  # the card's row: the newest
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        shown = screen_output(app)[0]
        # The dialog's lines, without the log rows left and right of its border.
        lines = [line.split("█")[1].strip() for line in shown.splitlines() if line.count("█") >= 2]
        assert "outcome:   denied" in "\n".join(lines)
        assert not any(line.startswith(forged) for line in lines), \
            f"the card's own line {forged!r} is drawn as a line of the detail"
