"""Read-only for a reason that passes (a tmux session attached since the TUI started, its
window shown now) is lifted once the operator check passes, and comes back when it fails.

(Found by helper tui25: the check ran once at start, so a person who started the TUI in
a detached tmux session and attached to it stayed read-only until a restart.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from engine.app.replay import VirtualClock
from engine.effects.operator import OperatorCheck
from tests.conftest import polls
from tui.app import ArrowgateApp

from .conftest import settle
from .world import open_engine


async def test_read_only_follows_the_operator_check(tui_db: Path,
                                                    tui_clock: VirtualClock) -> None:
    verdicts = [OperatorCheck(False, "no client is attached to its tmux session")]
    app = ArrowgateApp(open_engine(tui_db, tui_clock), operator=lambda: verdicts[-1],
                       start="holds")
    app.OPERATOR_RECHECK_S = 0.05
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        banner = app.screen.query_one("#operator-banner", Static)
        assert "no client is attached" in str(banner.render())
        assert "approve" not in {b.binding.action for b in app.active_bindings.values()}
        # WHEN a person attaches: the check passes
        verdicts.append(OperatorCheck(True))
        for _ in polls():
            await pilot.pause(0.05)
            if not app.operator_refusal:
                break
        # THEN the consent keys are back and the banner says nothing
        assert app.operator_refusal == ""
        assert str(banner.render()).strip() == ""
        await settle(pilot)
        assert "approve" in {b.binding.action for b in app.active_bindings.values()}
        # AND when the check fails again, read-only comes back
        verdicts.append(OperatorCheck(False, "its tmux pane is not the one shown"))
        for _ in polls():
            await pilot.pause(0.05)
            if app.operator_refusal:
                break
        assert "not the one shown" in str(banner.render())
