"""The TUI's install review installs the package the person read, or nothing.

(Found by a helper, u15: it installed whatever was offered under the name when
y was pressed; a re-offer while the review was open got unseen high-risk grants
with the plain key.)
"""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from engine import Engine, World, file_digests
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.review import ReviewScreen

from .conftest import settle
from .world import make_app

MEEK = {"name": "acme.meek", "version": "1.0.0", "permissions": {"usage.read": {}}}
#: The same name offered again (`arrowgate package offer --db`, which needs no person).
GREEDY = {"name": "acme.meek", "version": "1.0.0",
          "permissions": {"usage.read": {}, "fs.write": {}, "agents.prompt": {}}}


async def _offer(path: Path, clock: VirtualClock, raw: dict) -> None:
    engine = Engine.open(path, clock=clock, world=World(net=None, fs=None))
    try:
        await engine.offer(raw["name"], raw, file_digests({"manifest.json": json.dumps(raw)}))
    finally:
        engine.close()


async def test_the_review_installs_only_the_package_shown(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """SPEC §4.1/§4.4: the person accepts the review they read; the service and the CLI
    pin it (`review_hash`, stale otherwise) — the TUI's review screen does not."""
    await _offer(tui_db, tui_clock, MEEK)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        app.push_screen(ReviewScreen("acme.meek"))
        await settle(pilot)
        review = app.screen
        assert isinstance(review, ReviewScreen)
        shown = str(review.query_one("#review-text", Static).render())
        assert "usage.read" in shown and "fs.write" not in shown  # a low-risk package: y
        # WHILE the review is open, another process offers the same name again
        await _offer(tui_db, tui_clock, GREEDY)
        for _ in polls():
            await pilot.pause(0.05)
            if "fs.write" in app.engine.state.packages["acme.meek"].raw["permissions"]:
                break
        # The review closes once it hears of the new offer (its text then gone with it):
        # open, it still shows what was read, never the new offer under the old yes.
        if app.screen is review:
            assert "fs.write" not in str(review.query_one("#review-text", Static).render())
        # WHEN the person accepts what they read
        await pilot.press("y")
        await settle(pilot)
        granted = app.engine.state.grants.get("acme.meek", set())
        # THEN nothing they did not see is granted (refused as stale, or the new review shown)
        assert not granted & {"fs.write", "agents.prompt"}, f"granted unseen: {sorted(granted)}"
