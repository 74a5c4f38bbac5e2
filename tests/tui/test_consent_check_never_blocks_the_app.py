"""The operator check before a consent action never stops the app, and a key pressed while
it runs consents to nothing.

Rule: the check a consent action waits for runs off the app's thread. While it runs the
app keeps drawing and taking keys, and those keys are not consent: escape cancels the
action waiting for the check, and any other key (the cursor moved to another hold, its
dialog opened, its yes) does nothing. A check that cannot tell in time refuses, and the
person is told the action was not done.

(Found by helper tui26 in round 26: under tmux the check asks the tmux server three
times, five seconds each; a stuck or hostile server froze the whole app for up to 15 s
at the consent key, and the keys typed meanwhile were all taken afterwards, in order.)
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock
from engine.effects.operator import OperatorCheck
from tests.conftest import polls
from tui.app import ArrowgateApp
from tui.screens.hold import HoldScreen

from .conftest import open_hold, settle
from .world import add_hostile, open_engine


class SlowCheck:
    """An operator check that passes, but only once the test lets it (a tmux server slow
    to answer). The look the app takes when it starts passes at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.returned = threading.Event()
        self.calls = 0

    def __call__(self) -> OperatorCheck:
        self.calls += 1
        if self.calls > 1:
            self.started.set()
            self.release.wait(10)
            self.returned.set()
        return OperatorCheck(True)


def _app(tui_db: Path, tui_clock: VirtualClock, check: SlowCheck) -> ArrowgateApp:
    app = ArrowgateApp(open_engine(tui_db, tui_clock), operator=check, start="holds")
    app.OPERATOR_RECHECK_S = 3600.0  # only the consent action's own look
    return app


def _state(app: ArrowgateApp, prompt_id: str) -> str:
    prompt = app.engine.prompt(prompt_id)
    return prompt.state if prompt is not None else "gone"


def _press_yes(pilot: Any) -> asyncio.Task[None]:
    """Shift+y, as a person presses it: the test goes on at once. (Pilot's own press waits
    until the dialog's handler has ended, which waits for the check.)"""
    return asyncio.ensure_future(pilot.press("Y"))


async def _wait_started(pilot: Any, check: SlowCheck) -> None:
    for _ in polls():
        if check.started.is_set():
            break
        await pilot.pause(0.02)
    assert check.started.is_set(), "the consent action never asked the operator check"


async def test_the_app_draws_while_the_check_waits_and_the_action_follows_its_answer(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    held = await add_hostile(tui_db, tui_clock, text="Short: rm -rf the backups.")
    check = SlowCheck()
    app = _app(tui_db, tui_clock, check)
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            dialog = await open_hold(pilot, held)
            assert isinstance(dialog, HoldScreen) and dialog.all_seen
            # WHEN the person approves and the check is slow to answer
            pressed = _press_yes(pilot)
            await _wait_started(pilot, check)
            # THEN the app goes on (this test runs) while the check has not answered
            assert not check.returned.is_set(), "the app waited for the check on its thread"
            await pilot.pause(0.05)
            assert _state(app, held) == "held"
        finally:
            check.release.set()
        await pressed
        # AND once it passes, the approval is done
        for _ in polls():
            await pilot.pause(0.02)
            if _state(app, held) != "held":
                break
        await settle(pilot)
        assert _state(app, held) in ("queued", "delivered"), _state(app, held)


async def test_keys_pressed_while_the_check_waits_consent_to_nothing(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    held = await add_hostile(tui_db, tui_clock, text="Short: rm -rf the backups.")
    check = SlowCheck()
    app = _app(tui_db, tui_clock, check)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        others = [p.id for p in app.engine.prompts(state="held") if p.id != held]
        assert others
        try:
            await open_hold(pilot, held)
            pressed = _press_yes(pilot)
            await _wait_started(pilot, check)
            # WHEN, while it waits, the person moves to another hold, opens it, presses its
            # yes, and then escape
            await pilot.press("up", "down", "a", "Y", "Y", "escape")
        finally:
            check.release.set()
        await pressed
        for _ in polls():
            await pilot.pause(0.02)
            if check.returned.is_set():
                break
        await settle(pilot)
        # THEN nothing is approved: the escape cancelled the first, the rest were no consent,
        # and the dialog on screen is still the first hold's (no other was opened)
        assert isinstance(app.screen, HoldScreen) and app.screen.prompt.id == held
        assert {p: _state(app, p) for p in [held, *others]} == \
            {p: "held" for p in [held, *others]}
        said = [n.message for n in app._notifications]
        assert any("cancelled" in m and "not done" in m for m in said), said


async def test_a_check_that_cannot_tell_in_time_refuses(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    held = await add_hostile(tui_db, tui_clock, text="Short: rm -rf the backups.")
    check = SlowCheck()
    app = _app(tui_db, tui_clock, check)
    app.OPERATOR_WAIT_S = 0.2
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        try:
            await open_hold(pilot, held)
            # WHEN the person approves and the check never answers in time
            pressed = _press_yes(pilot)
            await _wait_started(pilot, check)
            for _ in polls():
                await pilot.pause(0.05)
                if any("refused" in n.message for n in app._notifications):
                    break
            # THEN it is refused and said so, and nothing is approved
            assert _state(app, held) == "held"
            said = [n.message for n in app._notifications if n.severity == "error"]
            assert any("refused" in m and "in time" in m for m in said), said
        finally:
            check.release.set()
        await pressed
        await settle(pilot)
        assert _state(app, held) == "held"
