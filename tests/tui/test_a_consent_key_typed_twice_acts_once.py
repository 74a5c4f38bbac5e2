"""A consent key that arrives twice in one burst (typed fast, a key repeating, one read of
the terminal) acts once, and the app goes on.

Rule (SPEC §4.5, §7): one consent action at a time. While one waits for the operator
check, a second one (the same key again, read before the wait was drawn) is not done and
says so; the dialog closes once, on the first action's answer, and no wait is left behind.

(Found by helper tui27 in round 27: both keys reached the dialog before the wait screen was
drawn; two waits were stacked and tracked only the newest, so the first's end left the
second on screen (every key dropped, esc doing nothing); the dialog's dismissal popped a
wait instead of itself, the second rejection was refused as NOT_FOUND, and the dialog,
dismissed twice, crashed the app.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import events

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.checking import CheckingScreen
from tui.screens.hold import HoldScreen
from tui.screens.holds import HoldsScreen
from tui.screens.review import ReviewScreen

from .conftest import open_hold, settle
from .test_consent_check_never_blocks_the_app import SlowCheck, _app, _state, _wait_started
from .world import add_hostile


async def _twice_then_answer(pilot, check: SlowCheck, key: str) -> None:
    """``key`` twice in one burst, as the terminal driver posts a read of two keys; then
    the check answers, and the app settles."""
    app = pilot.app
    try:
        app.post_message(events.Key(key, key))
        app.post_message(events.Key(key, key))
        await _wait_started(pilot, check)
        await pilot.pause(0.1)
    finally:
        check.release.set()
    for _ in polls():
        await pilot.pause(0.05)
        if not any(isinstance(s, CheckingScreen) for s in app.screen_stack):
            break
    await settle(pilot)


async def test_a_reject_typed_twice_rejects_once_and_closes_its_dialog(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    held = await add_hostile(tui_db, tui_clock, text="Short: rm -rf the backups.")
    check = SlowCheck()
    app = _app(tui_db, tui_clock, check)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        assert isinstance(await open_hold(pilot, held, key="r"), HoldScreen)
        # WHEN the reject key arrives twice while the operator check is slow
        await _twice_then_answer(pilot, check, "y")
        # THEN the hold is rejected once, its dialog closed, no wait is left on screen
        assert _state(app, held) == "rejected"
        assert [type(s) for s in app.screen_stack] == [HoldsScreen]
        said = [n.message for n in app._notifications]
        assert not any("NOT_FOUND" in m for m in said), said
        assert sum("rejected" in m and held in m for m in said) == 1, said


async def test_an_install_typed_twice_installs_once_and_closes_the_review(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    await add_hostile(tui_db, tui_clock, text="Short.")
    check = SlowCheck()
    app = _app(tui_db, tui_clock, check)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        app.push_screen(ReviewScreen("acme.prompter"))
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.all_seen
        # WHEN the high-risk accept key arrives twice while the operator check is slow
        await _twice_then_answer(pilot, check, "Y")
        # THEN the package is installed once, the review closed, no wait left on screen
        assert app.engine.state.packages["acme.prompter"].installed
        assert [type(s) for s in app.screen_stack] == [HoldsScreen]
        said = [n.message for n in app._notifications]
        assert sum("acme.prompter installed" in m for m in said) == 1, said
        assert not any("refused" in m for m in said), said


async def test_a_second_consent_action_while_one_waits_is_not_done_and_says_so(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """Two consent actions at once (whatever started them): the wait and the answer stay
    the first one's; the second is not done, and the person is told."""
    held = await add_hostile(tui_db, tui_clock, text="Short: rm -rf the backups.")
    check = SlowCheck()
    app = _app(tui_db, tui_clock, check)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        engine = app.engine
        # WHEN a reject waits for the operator check and a second consent action starts
        first = asyncio.ensure_future(app.consent("hold: reject",
                                                  lambda: engine.reject_hold(held)))
        try:
            await _wait_started(pilot, check)
            second = await app.consent("grant: revoke",
                                       lambda: engine.revoke("acme.notes", "cards.connected"))
            await pilot.pause()
            # THEN the second is not done and said so; one wait stands, the first's
            assert second is None
            assert "cards.connected" in engine.state.grants["acme.notes"]
            waits = [s for s in app.screen_stack if isinstance(s, CheckingScreen)]
            assert [w.what for w in waits] == ["hold: reject"]
            said = [n.message for n in app._notifications]
            assert any("grant: revoke" in m and "not done" in m for m in said), said
        finally:
            check.release.set()
        await first
        await settle(pilot)
        # AND the first is done, its wait gone
        assert _state(app, held) == "rejected"
        assert [type(s) for s in app.screen_stack] == [HoldsScreen]
