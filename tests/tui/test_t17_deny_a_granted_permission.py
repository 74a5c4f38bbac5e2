"""Denying, in a card's request dialog, a permission it holds: the person is told the truth.

(t17) The request dialog (`o` on a card, tui/screens/request.py) lists every
optional permission with its state "now: granted / not granted" and offers
"n deny" on each. On one already granted, `engine.request(..., answer=False)`
records a "deny" and leaves the grant as it is (engine/services/consent.py:334),
yet the TUI says "reader1: clipboard.write denied" (request.py:142) and closes.
The person believes the card lost the permission; it keeps it and keeps using it.
A careful user expects "deny" on a held permission either to revoke it (with the
revoke's confirmation) or to be refused with "it is granted; revoke it on the
grants screen" — never a message that it was denied while it stays granted.
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine, World
from engine.app.replay import VirtualClock
from tui.screens.request import RequestScreen

from .conftest import settle
from .world import make_app


async def test_deny_of_a_granted_permission_is_not_reported_as_done(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    engine = Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None))
    try:
        await engine.install("acme.reader")
        await engine.add_node({"id": "reader1", "type": "card", "package": "acme.reader",
                               "visible": True}, workspace="w1")
        await engine.grant("acme.reader", "clipboard.write")
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        assert app.screen.select_node("reader1")  # type: ignore[attr-defined]
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, RequestScreen)
        assert app.screen.selected() == "clipboard.write"
        await pilot.press("n")
        await settle(pilot)
        told = [n.message for n in app._notifications]  # noqa: SLF001
        still = "clipboard.write" in app.engine.state.grants["acme.reader"]
        assert not (still and any("clipboard.write denied" in m for m in told)), \
            f"told {told!r} while clipboard.write is still granted"
