"""A card's request dialog names the asking card as one id, quoted where the id holds a
space, as every other line of the TUI does.

Rule (the TUI's ids are quoted where they hold what separates words,
`engine.core.text.quoted`): the request's title wrote the card's id bare, so a card whose
id is "notes of acme.trusted" asked as "Card notes of acme.trusted asks for a permission",
its id reading as the dialog's words about which package asks.

(Found by helper tui32 in round 32.)
"""

from __future__ import annotations

import json
from pathlib import Path

from engine import file_digests
from engine.app.replay import VirtualClock
from tui.screens.request import RequestScreen

from .conftest import settle
from .world import make_app, open_engine

CARD = "notes of acme.trusted"
WIDE = {"name": "acme.wide", "version": "1.0.0",
        "permissions": {"agents.read": {}, "clipboard.write": {"optional": True}}}


async def test_the_request_title_quotes_a_card_id_of_words(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    # GIVEN a card whose id reads as words, of a package with an optional permission
    engine = open_engine(tui_db, tui_clock)
    try:
        await engine.offer(WIDE["name"], WIDE, file_digests({
            "manifest.json": json.dumps(WIDE, sort_keys=True), "index.js": "//"}))
        await engine.install(WIDE["name"])
        await engine.add_node({"id": CARD, "type": "card", "package": "acme.wide",
                               "visible": True}, workspace="w1")
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.screen.select_node(CARD)  # type: ignore[attr-defined]
        await settle(pilot)
        # WHEN the person opens its request
        await pilot.press("o")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, RequestScreen)
        # THEN the title names the card quoted, as one id
        title = str(dialog.query_one(".dialog-title").render())
        assert title == f'Card "{CARD}" asks for a permission', title
    app.engine.close()
