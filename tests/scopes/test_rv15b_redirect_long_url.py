"""A redirect the card never wrote is not held to the card's argument bounds.

SPEC §8.1: a fetch in flight is abandoned when its *permission* is revoked
(or its card or workspace removed) meanwhile. The in-flight re-check now
decides the hop being fetched (`GuardedFetch._withdrawn` with `_Flight.args`,
the card's arguments with ``url`` replaced by the hop's), and so runs check 3
(arguments within ``max_payload``) on a URL the *server* chose: a redirect to a
URL longer than the workspace's ``max_payload`` is abandoned as
INVALID_ARGUMENT, logged ``cancelled``, though nothing about consent moved and
the hop passed its own scope check.

(rv15b review; in-process with a scripted resolver and transport.)
"""

from __future__ import annotations

import asyncio
import tempfile

from engine import World
from engine.effects.netguard import FetchResponse, GuardedFetch

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
    await engine.create_workspace("w1", tempfile.mkdtemp(prefix="rv15b-net-"),
                                  settings={"max_payload": 1024})
    await offer_install(engine, manifest("acme.net", {
        "network": {"hosts": ["api.example.org"]}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"},
                          workspace="w1")
    d = await asyncio.wait_for(engine.call("c1", "net.fetch", None,
                                           {"url": "https://api.example.org/start"}), 10)
    assert d.code is None or d.outcome == "ok", (d.outcome, d.code, d.message)
    assert d.value == {"status": 200, "body": "SECOND HOP"}, d.value
