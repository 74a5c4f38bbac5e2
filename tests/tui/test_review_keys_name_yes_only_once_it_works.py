"""The install review names its accept key only once that key works: before all of it was
on screen, its keys line says to scroll through, as every other consent dialog's does.

(Found by helper tui25 at 60x20: after `end`, the review's last line read "shift+y
accept and install (high risk)" while shift+y did nothing, as the middle had been
jumped over; a person who pressed it and then esc could believe the package installed.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from engine.app.replay import VirtualClock
from tui.screens.review import ReviewScreen

from .conftest import settle
from .test_install_review_seen_whole import _offer
from .world import make_app


async def test_the_accept_key_is_named_once_it_works(tui_db: Path,
                                                     tui_clock: VirtualClock) -> None:
    await _offer(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        app.push_screen(ReviewScreen("acme.greedy"))
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        keys = review.query_one("#review-keys", Static)
        # WHEN the person jumps to the end, over the middle
        await pilot.press("end")
        await settle(pilot)
        # THEN the keys line does not offer the accept key, and says what it waits for
        assert not review.all_seen
        hint = str(keys.render())
        assert "accept and install" not in hint and "Scroll through" in hint, hint
        assert "n decline" in hint and "esc close" in hint, hint
        # WHEN the person scrolls through it all
        await pilot.press("home")
        for _ in range(80):
            if review.all_seen:
                break
            await pilot.press("pagedown")
            await settle(pilot)
        # THEN the accept key is named
        hint = str(keys.render())
        assert "shift+y accept and install (high risk)" in hint, hint
