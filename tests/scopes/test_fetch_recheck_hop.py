"""A fetch in flight is re-checked for the hop being fetched now, not the card's first URL.

SPEC §8.1: "a fetch whose permission is revoked ... while it is in flight is
abandoned and its result never reaches the card". A fetch that began at a
declared public host (``network``) and was redirected to ``http://localhost:…``
(``network.local``) is abandoned when the person revokes ``network.local``:
PERMISSION_DENIED, reason ``not-granted``, naming network.local, logged
``cancelled``.

(Found by a helper: ``GuardedFetch._withdrawn`` decided the card's first URL
again, so the redirected fetch kept running and its body reached the card.)

(In-process with a scripted resolver and transport: the first hop needs a public
https host, which this machine cannot reach.)
"""

from __future__ import annotations

import asyncio

from engine import World
from engine.effects.netguard import FetchResponse, GuardedFetch
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

PUBLIC = "93.184.216.34"


async def test_revoking_the_permission_of_the_hop_in_flight_abandons_the_fetch(
        make_engine) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def transport(method, url, headers, body, address, **limits):
        if address == PUBLIC:
            return FetchResponse(302, "", {"location": "http://localhost:8080/admin"})
        started.set()
        await release.wait()
        return FetchResponse(200, "LOCAL ADMIN PAGE")

    engine = make_engine(world=World(net=GuardedFetch(lambda h: [PUBLIC], transport),
                                     fs=None))
    await engine.create_workspace("w1", str(short_dir("e15-net-")))
    await offer_install(engine, manifest("acme.both", {
        "network": {"hosts": ["api.example.org"]}, "network.local": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.both"},
                          workspace="w1")
    call = asyncio.ensure_future(engine.call("c1", "net.fetch", None,
                                             {"url": "https://api.example.org/start"}))
    await asyncio.wait_for(started.wait(), 10)   # now fetching http://localhost:8080/admin
    await engine.revoke("acme.both", "network.local")
    release.set()
    d = await asyncio.wait_for(call, 10)
    assert d.value is None and d.code == "PERMISSION_DENIED", (d.outcome, d.value)
    assert (d.reason, d.permission) == ("not-granted", "network.local"), d.message
    rows = [r for r in engine.log_rows() if r["call"] == "net.fetch"]
    assert (rows[-1]["outcome"], rows[-1]["code"]) == ("cancelled", "PERMISSION_DENIED")
