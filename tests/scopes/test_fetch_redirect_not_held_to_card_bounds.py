"""A redirect the card never wrote is not held to the card's argument bounds: a fetch in
flight is abandoned only when its permission is revoked, or its card or workspace removed
(SPEC §8.1).

(Found by the round's second review: the in-flight re-check of the hop ran check 3 on the
URL the server chose, so a redirect longer than ``max_payload`` was abandoned as
INVALID_ARGUMENT and logged ``cancelled``, though consent had not moved.)
"""

from __future__ import annotations

import asyncio

from engine import World
from engine.effects.netguard import FetchResponse, GuardedFetch
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

PUBLIC = "93.184.216.34"
LONG = "https://api.example.org/next?" + "q" * 2000


async def test_a_redirect_longer_than_max_payload_is_not_a_withdrawn_fetch(make_engine) -> None:
    async def transport(method, url, headers, body, address, **limits):
        if url.endswith("/start"):
            return FetchResponse(302, "", {"location": LONG})
        return FetchResponse(200, "SECOND HOP")

    engine = make_engine(world=World(net=GuardedFetch(lambda h: [PUBLIC], transport),
                                     fs=None))
    await engine.create_workspace("w1", str(short_dir("rv15b-net-")),
                                  settings={"max_payload": 1024})
    await offer_install(engine, manifest("acme.net", {
        "network": {"hosts": ["api.example.org"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"},
                          workspace="w1")
    d = await asyncio.wait_for(engine.call("c1", "net.fetch", None,
                                           {"url": "https://api.example.org/start"}), 10)
    assert d.code is None or d.outcome == "ok", (d.outcome, d.code, d.message)
    assert d.value == {"status": 200, "body": "SECOND HOP"}, d.value
