"""A card's request for an optional permission is allowed only once all of its text was on
screen: its hosts, what users see, down to the keys (SPEC §4.2, as every consent dialog,
`tui.screens.seen`); a permission chosen anew is read anew.

(Found by helper tui25 at 60x20: a request for ``network`` to 30 hosts showed 12 of them,
the rest and the keys line cut off by the dialog's edge, and ``y`` allowed all 30.)
"""

from __future__ import annotations

import json
from pathlib import Path

from engine import Engine, World, file_digests
from engine.app.replay import VirtualClock
from tui.screens.request import RequestScreen

from .conftest import settle
from .screen import screen_output
from .world import make_app

HOSTS = [f"x{n}.example.org" for n in range(30)]
WIDE = {"name": "acme.wide", "version": "1.0.0",
        "permissions": {"agents.read": {}, "clipboard.write": {"optional": True},
                        "network": {"optional": True, "hosts": HOSTS}}}


async def _wide_card(path: Path, clock: VirtualClock) -> None:
    engine = Engine.open(path, clock=clock, world=World(net=None, fs=None))
    try:
        await engine.offer(WIDE["name"], WIDE, file_digests({
            "manifest.json": json.dumps(WIDE, sort_keys=True), "index.js": "//"}))
        await engine.install(WIDE["name"])
        await engine.add_node({"id": "wide1", "type": "card", "package": "acme.wide",
                               "visible": True}, workspace="w1")
    finally:
        engine.close()


async def test_a_request_is_allowed_only_once_read_through(tui_db: Path,
                                                          tui_clock: VirtualClock) -> None:
    await _wide_card(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        assert app.screen.select_node("wide1")  # type: ignore[attr-defined]
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, RequestScreen)
        await pilot.press("down")  # clipboard.write -> network
        await settle(pilot)
        assert dialog.selected() == "network"
        assert HOSTS[-1] not in screen_output(app)[0]  # the last host: not on screen
        # WHEN the person allows before the whole text was on screen
        await pilot.press("y")
        await settle(pilot)
        # THEN nothing is granted, and the dialog is still open
        assert "network" not in app.engine.state.grants["acme.wide"]
        assert app.screen is dialog
        # WHEN the person scrolls the text through, then allows
        await pilot.press("tab")
        for _ in range(40):
            if dialog.all_seen:
                break
            await pilot.press("pagedown")
            await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        # THEN it is granted
        assert "network" in app.engine.state.grants["acme.wide"]
