"""SPEC §4.1: "Grants are per package — every copy of the card, on every canvas, shares
them"; §4.3: a revoke tells every card of the package (``permissions.changed``) and its
calls fail from that moment. On both stores, and after a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install


async def _canvases(engine: Engine, folder: Path) -> None:
    """acme.c (usage.read, clipboard.write optional) with card c1 on w1, c2 on w2, and a
    copy c1 spawned of itself on w1."""
    for ws in ("w1", "w2"):
        (folder / ws).mkdir(parents=True)
        await engine.create_workspace(ws, folder / ws)
    await offer_install(engine, manifest("acme.c", {
        "usage.read": {}, "canvas.spawn": {}, "clipboard.write": {"optional": True}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.c"}, workspace="w1")
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.c"}, workspace="w2")


async def test_one_grant_holds_for_every_card_of_the_package_on_every_canvas(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Installed once, answered once on one canvas, revoked once: every card of the
    package, on both canvases and its spawned copy, is allowed and refused together,
    and every one of them is told of the revoke."""
    # GIVEN one package's cards on two canvases and a spawned copy
    events: list[Any] = []
    engine = make_engine(sink=events.append)
    await _canvases(engine, tmp_path)
    spawned = await engine.call("c1", "canvas.spawn", None, {"kind": "self"})
    assert spawned.allowed
    copy = str(spawned.value)
    cards = ["c1", "c2", copy]
    # WHEN the install's grant and one optional answer (on w1's card) are given
    for card in cards:
        assert (await engine.call(card, "usage.get")).allowed, card
        assert (await engine.call(card, "clipboard.copyText", None, {"text": "x"})).reason \
            == "not-granted", card
    assert await engine.request("c1", "clipboard.write", answer=True) is True
    # THEN every card of the package has them, on either canvas, after a restart too
    for opened in (engine, make_engine()):
        for card in cards:
            assert (await opened.call(card, "usage.get")).allowed, card
            clock.t += 1.0  # the copy shares c1's clipboard window (1 a second)
            d = await opened.call(card, "clipboard.copyText", None, {"text": card})
            assert d.allowed, (card, d)
    # WHEN the person revokes it once
    events.clear()
    assert await engine.revoke("acme.c", "usage.read") is True
    # THEN every card is told, and every card's calls fail from that moment
    assert sorted(e.card for e in events if e.type == "permissions.changed") == sorted(cards)
    for opened in (engine, make_engine()):
        for card in cards:
            d = await opened.call(card, "usage.get")
            assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-granted"), card
