"""The app starts, and draws, before the operator check has answered; it is read-only
until then.

Rule: the operator check never runs on the app's thread, at start either. Under tmux it
asks the tmux server (three commands of up to five seconds each): a stuck server must
not keep the app from drawing, and until the check answers no consent key is offered.

(Found by helper tui26 in round 26, looking for more of the kind of the consent check
run on the app's thread: the first look ran in the app's constructor, so a stuck tmux
server kept `arrowgate tui` from drawing anything for up to 15 s.)
"""

from __future__ import annotations

import threading
from pathlib import Path

from textual.widgets import Static

from engine.app.replay import VirtualClock
from engine.effects.operator import OperatorCheck
from tests.conftest import polls
from tui.app import ArrowgateApp

from .world import open_engine


async def test_the_app_draws_read_only_until_the_check_answers(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    release, returned = threading.Event(), threading.Event()

    def operator() -> OperatorCheck:
        release.wait(10)
        returned.set()
        return OperatorCheck(True)

    # GIVEN a check that does not answer yet
    try:
        app = ArrowgateApp(open_engine(tui_db, tui_clock), operator=operator, start="holds")
        # THEN the app is made without waiting for it
        assert not returned.is_set(), "the app waited for the check before it could start"
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause(0.1)
            # AND it draws, read-only, saying why
            assert app.operator_refusal and not returned.is_set()
            banner = app.screen.query_one("#operator-banner", Static)
            assert "operator check" in str(banner.render()), str(banner.render())
            assert "approve" not in {b.binding.action for b in app.active_bindings.values()}
            # WHEN the check answers: a person operates it
            release.set()
            for _ in polls():
                await pilot.pause(0.05)
                if not app.operator_refusal:
                    break
            # THEN the consent keys are offered
            assert app.operator_refusal == ""
            await pilot.pause(0.1)
            assert "approve" in {b.binding.action for b in app.active_bindings.values()}
    finally:
        release.set()
