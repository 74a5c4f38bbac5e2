"""A revoke abandons a fetch in flight even at a hop whose URL is past the card's bounds.

SPEC §8.1: a fetch whose permission is revoked while it is in flight is
abandoned and its result never reaches the card (logged ``cancelled``,
PERMISSION_DENIED). A redirect's URL is the server's: it is not held to the
card's argument bounds (``max_payload``), but consent still is.

Found in round 19: the in-flight re-check decided the hop with checks 1–8 in
SPEC §5's order, where the argument bounds (check 3) come before the grant
(checks 4–5); for a hop longer than ``max_payload`` it got INVALID_ARGUMENT,
which it set aside (the bounds are not the card's to meet) — and with it the
revoke, so the body reached the card.
"""

from __future__ import annotations

import asyncio

from engine import World
from engine.effects.netguard import FetchResponse, GuardedFetch
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

PUBLIC = "93.184.216.34"
LONG = "https://api.example.org/next?" + "q" * 2000


async def test_a_revoke_at_a_long_redirect_abandons_the_fetch(make_engine) -> None:
    second, release = asyncio.Event(), asyncio.Event()

    async def transport(method, url, headers, body, address, **limits):
        if url.endswith("/start"):
            return FetchResponse(302, "", {"location": LONG})
        second.set()
        await release.wait()
        return FetchResponse(200, "SECOND HOP")

    engine = make_engine(world=World(net=GuardedFetch(lambda h: [PUBLIC], transport), fs=None))
    await engine.create_workspace("w1", str(short_dir("r19-long-")),
                                  settings={"max_payload": 1024})
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": [
        "api.example.org"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"},
                          workspace="w1")
    call = asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                             {"url": "https://api.example.org/start"}))
    try:
        await asyncio.wait_for(second.wait(), 10)
        await engine.revoke("acme.net", "network")
        d = await asyncio.wait_for(asyncio.shield(call), 5)
    finally:
        release.set()
    assert d.value is None and d.code == "PERMISSION_DENIED", (d.code, d.value)
    assert (d.reason, d.permission) == ("not-granted", "network"), d.message
    rows = [r for r in engine.log_rows() if r["call"] == "net.fetch"]
    assert (rows[-1]["outcome"], rows[-1]["code"]) == ("cancelled", "PERMISSION_DENIED")
