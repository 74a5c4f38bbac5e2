"""The whole reason the app is read-only can be read: the header's banner is cut at the
screen's edge, so the help (``?``) says it in full.

(Found by helper tui25 in tmux at 80x24: the banner read "read-only: no client is
attached to its tmux", the rest of the reason past the edge and nowhere else.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from engine.app.replay import VirtualClock
from engine.effects.operator import OperatorCheck
from tui.app import ArrowgateApp
from tui.screens.help import HelpScreen

from .conftest import settle
from .screen import screen_output
from .world import open_engine

REASON = ("no client is attached to its tmux session (tmux (server pid 4242)): no person "
          "is looking at it")


async def test_the_help_says_why_the_app_is_read_only(tui_db: Path,
                                                      tui_clock: VirtualClock) -> None:
    app = ArrowgateApp(open_engine(tui_db, tui_clock),
                       operator=lambda: OperatorCheck(False, REASON), start="holds")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        said = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert REASON in " ".join(said.split()), said


async def test_the_banner_cut_by_the_screen_says_so(tui_db: Path,
                                                    tui_clock: VirtualClock) -> None:
    """At 80 columns the banner is cut: it ends with "…", so what is left of the reason
    does not read as the whole of it. (Seen in tmux by helper tui34 in round 34: "read-only:
    no client is attached to a tmux", cut mid-sentence with nothing to say so.)"""
    app = ArrowgateApp(open_engine(tui_db, tui_clock),
                       operator=lambda: OperatorCheck(False, REASON), start="holds")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        header = screen_output(app)[0].splitlines()[0]
        assert "read-only: no client is attached" in header, header
        assert REASON not in header and "…" in header, header
