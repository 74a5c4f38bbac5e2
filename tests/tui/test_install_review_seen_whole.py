"""The install review installs only once all of it has been on screen: its permissions,
their texts, its tools and what its cards could reach, scrolled through to the keys
below them (SPEC §4.1; as a held prompt and every consent dialog, `tui.screens.seen`).

(Found in round 24: at 80x24 a review of a package asking for five high-risk permissions
showed the first of them, and shift+y installed all five.)
"""

from __future__ import annotations

import json
from pathlib import Path

from engine import Engine, World, file_digests
from engine.app.replay import VirtualClock
from tui.screens.review import ReviewScreen

from .conftest import settle
from .screen import screen_output
from .world import make_app

GREEDY = {"name": "acme.greedy", "version": "1.0.0",
          "tools": [f"tool{n}" for n in range(12)],
          "permissions": {"agents.prompt": {}, "agents.output": {}, "terminals.write": {},
                          "fs.write": {}, "network.local": {}, "usage.read": {}}}


async def _offer(path: Path, clock: VirtualClock) -> None:
    engine = Engine.open(path, clock=clock, world=World(net=None, fs=None))
    try:
        await engine.offer(GREEDY["name"], GREEDY, file_digests({
            "manifest.json": json.dumps(GREEDY, sort_keys=True), "index.js": "//"}))
    finally:
        engine.close()


async def test_the_review_installs_only_once_read_through(tui_db: Path,
                                                          tui_clock: VirtualClock) -> None:
    await _offer(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(ReviewScreen("acme.greedy"))
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        assert "usage.read" not in screen_output(app)[0]  # the last, lowest risk: below
        # WHEN the person accepts before the end of the review was on screen
        await pilot.press("Y", "y")
        await settle(pilot)
        # THEN nothing is installed
        assert not app.engine.state.packages["acme.greedy"].installed
        assert app.screen is review
        # WHEN the person scrolls through to the end, then accepts
        for _ in range(60):
            if review.all_seen:
                break
            await pilot.press("pagedown")
            await settle(pilot)
        await pilot.press("Y")
        await settle(pilot)
        # THEN it is installed
        assert app.engine.state.packages["acme.greedy"].installed


async def test_jumping_to_the_end_of_a_review_does_not_count_the_middle(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    await _offer(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(ReviewScreen("acme.greedy"))
        await settle(pilot)
        await pilot.press("end")
        await settle(pilot)
        await pilot.press("Y")
        await settle(pilot)
        assert not app.engine.state.packages["acme.greedy"].installed
