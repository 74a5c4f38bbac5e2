"""A fetch in flight is abandoned when its card is removed, even if a card of the same id follows.

SPEC §8.1: a fetch whose card is removed while it is in flight is abandoned
and its result never reaches the card (logged ``cancelled``,
PERMISSION_DENIED). Node ids can be used again: the person removes card
``c1`` (package acme.old) and adds another ``c1`` of package acme.new, which
declares the same host. The fetch acme.old's card began is still its own —
acme.old's consent, acme.old's code waiting for the body — and must end.

Found in round 19: the in-flight re-check decided for the card id alone, so
it judged the new card's package (whose grant allowed the host) and the
body reached the removed card's call, even after acme.old's network grant
was revoked as well.
"""

from __future__ import annotations

import asyncio

import pytest

import engine.effects.netguard as netguard
from engine import World
from engine.effects.netguard import FetchResponse, GuardedFetch
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

PUBLIC = "93.184.216.34"


async def test_a_fetch_ends_with_its_card_when_another_takes_its_id(
        make_engine, monkeypatch: pytest.MonkeyPatch) -> None:
    # The watch's look falls after both changes (as when they come within one tick):
    # the fetch's last decision, when its answer arrives, is what must catch it.
    monkeypatch.setattr(netguard, "RECHECK", 3600.0)
    started, release = asyncio.Event(), asyncio.Event()

    async def transport(method, url, headers, body, address, **limits):
        started.set()
        await release.wait()
        return FetchResponse(200, "THE BODY")

    engine = make_engine(world=World(net=GuardedFetch(lambda h: [PUBLIC], transport), fs=None))
    await engine.create_workspace("w1", str(short_dir("r19-reid-")))
    for name in ("acme.old", "acme.new"):
        await offer_install(engine, manifest(name, {"network": {"hosts": ["api.example.org"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.old"}, workspace="w1")
    call = asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                             {"url": "https://api.example.org/"}))
    await asyncio.wait_for(started.wait(), 10)
    await engine.revoke("acme.old", "network")
    await engine.remove_node("c1")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.new"}, workspace="w1")
    release.set()
    d = await asyncio.wait_for(call, 10)
    assert d.value is None and d.code == "PERMISSION_DENIED", (d.code, d.value)
    assert d.reason == "not-connected", d.message
    rows = [r for r in engine.log_rows() if r["call"] == "net.fetch"]
    assert (rows[-1]["outcome"], rows[-1]["code"]) == ("cancelled", "PERMISSION_DENIED")
