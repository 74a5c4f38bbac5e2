"""An install review closes, saying why, once the offer it shows is installed, withdrawn
or offered anew elsewhere (another app, the service): its accept key is never left
offered for a question that is gone.

Rule (SPEC §4.1: the person accepts the review they read; §4.5): the review stayed open
with "y install" offered after another program installed the package (its yes then
refused, the package installed already), withdrew the offer, or offered another version
under the name (its yes then refused as ``stale``: the review on screen was not the
offer standing).

(Found by helper tui34 in round 34.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from engine import Engine, file_digests
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.review import ReviewScreen

from .conftest import DialogClock, _settle
from .test_review_installs_what_was_shown import GREEDY, MEEK, _offer
from .world import make_app, open_engine


async def _install(other: Engine) -> None:
    await other.install("acme.meek")


async def _withdraw(other: Engine) -> None:
    await other.remove_package("acme.meek")


async def _offer_anew(other: Engine) -> None:
    await other.offer("acme.meek", GREEDY, file_digests({"index.js": "// greedy"}))


@pytest.mark.parametrize(("act", "said"), [
    (_install, "acme.meek was installed"),
    (_withdraw, "acme.meek was withdrawn"),
    (_offer_anew, "acme.meek was offered anew"),
], ids=["installed", "withdrawn", "offered-anew"])
async def test_the_review_closes_and_says_why(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock,
        act: Callable[[Engine], Awaitable[None]], said: str) -> None:
    await _offer(tui_db, tui_clock, MEEK)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await _settle(pilot)
        screen = app.screen
        app.push_screen(ReviewScreen("acme.meek"))
        await _settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.review is not None
        dialog_clock.arm()
        assert review.armed
        # WHEN another program installs, withdraws or offers it anew
        other = open_engine(tui_db, tui_clock)
        try:
            await act(other)
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if app.screen is not review:
                break
        await _settle(pilot)
        # THEN the review is closed, and the person is told why
        assert app.screen is screen, app.screen
        messages = [n.message for n in app._notifications]
        assert any(said in m and "nothing was installed or declined here" in m
                   for m in messages), messages
        # AND its keys do nothing here: nothing more is recorded
        history = len(app.engine.history.entries())
        await pilot.press("y", "n")
        await _settle(pilot)
        assert len(app.engine.history.entries()) == history
    app.engine.close()
