"""A card's request for an optional permission says, before the person allows it, that the
permission goes to the card's package: every card of it, on every canvas, named.

Rule (SPEC §4.1: grants are per package, every copy of the card on every canvas shares
them; §4.2: the person answers the card's request): one card asks, but its allow grants
the package, and so every other card of it. The grants screen's grant dialog names them
("Every card of the package (c1, c2) may use it from now on"); the request dialog said
only "Card wide1 asks for a permission" and the package's name and version, so a person
allowing one card its clipboard or its network gave it to cards they were not asked
about, on canvases they were not looking at.

(Found by helper tui32 in round 32.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import file_digests
from engine.app.replay import VirtualClock
from tui.screens.request import RequestScreen

from .conftest import settle
from .world import build, make_app, open_engine

WIDE = {"name": "acme.wide", "version": "1.0.0",
        "permissions": {"agents.read": {}, "clipboard.write": {"optional": True}}}


async def _two_cards(store: Path | str, clock: VirtualClock, folder: Path) -> None:
    engine = open_engine(store, clock)
    try:
        await engine.offer(WIDE["name"], WIDE, file_digests({
            "manifest.json": json.dumps(WIDE, sort_keys=True), "index.js": "//"}))
        await engine.install(WIDE["name"])
        folder.mkdir(parents=True, exist_ok=True)
        await engine.create_workspace("w2", folder)
        await engine.add_node({"id": "wide1", "type": "card", "package": "acme.wide",
                               "visible": True}, workspace="w1")
        await engine.add_node({"id": "other copy", "type": "card", "package": "acme.wide"},
                              workspace="w2")
    finally:
        engine.close()


async def _request_names_the_cards(store: Path | str, clock: VirtualClock,
                                   folder: Path) -> None:
    # GIVEN a package with a card on w1, one on w2, and an optional permission
    await _two_cards(store, clock, folder)
    app = make_app(store, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.screen.select_node("wide1")  # type: ignore[attr-defined]
        await settle(pilot)
        # WHEN the person opens wide1's request
        await pilot.press("o")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, RequestScreen) and dialog.selected() == "clipboard.write"
        # THEN what they allow names the package and every card of it that gets it
        text = str(dialog.query_one("#request-text").render())
        assert "every card of acme.wide" in text, text
        assert "wide1" in text and '"other copy" on w2' in text, text
    app.engine.close()


async def test_a_request_names_every_card_its_allow_grants_to(
        tui_db: Path, tui_clock: VirtualClock, tmp_path: Path) -> None:
    await _request_names_the_cards(tui_db, tui_clock, tmp_path / "w2")


@pytest.mark.postgres
async def test_the_same_on_postgresql(pg_dsn: str, tmp_path: Path,
                                      tui_clock: VirtualClock) -> None:
    await build(pg_dsn, tmp_path / "ws", tui_clock)
    await _request_names_the_cards(pg_dsn, tui_clock, tmp_path / "w2")
