"""A look at the operator check that ends after a newer one never overrides it.

Rule: what the keys offer follows the newest look. The periodic look runs in a
thread; a look that is slow (a tmux server slow to answer) can end after the next
look did, and its older verdict must not be applied over the newer one.

(Found by review rv25 in round 25: each look applied its verdict when it ended, so a
slow look's older verdict could stand until the next look after it.)
"""

from __future__ import annotations

import threading
from pathlib import Path

from engine.app.replay import VirtualClock
from engine.effects.operator import OperatorCheck
from tests.conftest import polls
from tui.app import ArrowgateApp

from .conftest import settle
from .world import open_engine


async def test_a_slow_older_look_never_overrides_a_newer_one(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    first_may_end = threading.Event()
    calls: list[str] = []

    def operator() -> OperatorCheck:
        calls.append(threading.current_thread().name)
        if len(calls) == 2:  # the first periodic look: slow, and refusing
            first_may_end.wait(10)
            return OperatorCheck(False, "an old look: no client was attached")
        return OperatorCheck(True)

    # GIVEN the app (its first look at start passes) and no periodic look of its own
    app = ArrowgateApp(open_engine(tui_db, tui_clock), operator=operator, start="holds")
    app.OPERATOR_RECHECK_S = 3600.0
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.operator_refusal == ""
        # WHEN a look starts and hangs, a newer look passes, and then the old one ends
        app.recheck_operator()
        for _ in polls():
            await pilot.pause(0.02)
            if len(calls) == 2:
                break
        app.recheck_operator()
        for _ in polls():
            await pilot.pause(0.02)
            if len(calls) == 3:
                break
        await pilot.pause(0.1)
        first_may_end.set()
        await pilot.pause(0.3)
        await settle(pilot)
        # THEN the newer verdict stands
        assert app.operator_refusal == "", app.operator_refusal
