"""Deny, in a card's request dialog, on a permission the card holds: the person is told the truth.

The request dialog (`o` on a card) lists each optional permission with its
state. A deny answers the card's ask; it does not take a grant back (the engine
records the deny and leaves the grant). So on a granted permission the dialog
offers no deny: ``n`` says the permission is granted and that a revoke, on the
grants screen, takes it back — from every card of the package, which that
screen's confirmation names. It is not turned into a revoke from this one
card's dialog.

(Found by a helper: the dialog said "reader1: clipboard.write denied" and closed
while the grant stayed and the card kept using it.)
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine, World
from engine.app.replay import VirtualClock
from tui.screens.request import RequestScreen

from .conftest import settle
from .world import make_app


async def test_deny_of_a_granted_permission_says_to_revoke_it(
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
        keys = str(app.screen.query_one("#request-keys").render())
        told = [n.message for n in app._notifications]  # noqa: SLF001
        still = "clipboard.write" in app.engine.state.grants["acme.reader"]
        assert not (still and any("clipboard.write denied" in m for m in told)), \
            f"told {told!r} while clipboard.write is still granted"
        assert still
        assert any("a deny would not take it back" in m and "grants screen" in m
                   for m in told), told
        assert isinstance(app.screen, RequestScreen)  # still open: nothing was answered
        assert "granted: revoke it on the grants screen" in keys
