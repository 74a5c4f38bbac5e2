"""A card has a bounded number of fetches (and, counted apart, file calls) under way.

The rule: a card never holds more than `UNDER_WAY_PER_CARD` allowed fetches in
flight, nor as many file calls; one more is refused at once (``CARD_LIMIT``, reason
``under-way``), logged like every refusal, and nothing is sent. The bound is per
card and kind: another card is unaffected, the card's file calls too
(tests/scopes/test_fetch_burst_cheap.py), and it may fetch again once one ends.
(Hostile input never floods the engine: each fetch in flight holds a connection,
a file descriptor, its arguments and a task.)

Found in round 19: nothing bounded a card's fetches in flight — a card could keep
thousands of connections open to a silent server it declared, up to the process's
descriptor limit, after which the store, the service's socket and every other
card's calls failed.
"""

from __future__ import annotations

import asyncio

from engine import World
from engine.core.limits import UNDER_WAY_PER_CARD
from engine.effects.netguard import FetchResponse, GuardedFetch
from tests.conftest import polls
from tests.shortdirs import short_dir

from ..conftest import manifest, offer_install

PUBLIC = "93.184.216.34"


async def test_one_fetch_past_the_bound_is_refused_at_once_and_logged(make_engine) -> None:
    started: list[str] = []
    release = asyncio.Event()

    async def transport(method, url, headers, body, address, **limits):
        started.append(url)
        await release.wait()
        return FetchResponse(200, "body")

    engine = make_engine(world=World(net=GuardedFetch(lambda h: [PUBLIC], transport),
                                     fs=None))
    await engine.create_workspace("w1", str(short_dir("r19-uw-")))
    await offer_install(engine, manifest("acme.net", {"network": {"hosts": ["api.example.org"]}}))
    for card in ("c1", "c2"):
        await engine.add_node({"id": card, "type": "card", "package": "acme.net"},
                              workspace="w1")

    def fetch(card: str, i: int) -> asyncio.Future:
        return asyncio.ensure_future(engine.call(card, "net.fetch", None,
                                                 {"url": f"https://api.example.org/{i}"}))

    # GIVEN a card with the bound's number of fetches in flight
    flying = [fetch("c1", i) for i in range(UNDER_WAY_PER_CARD)]
    for _ in polls():
        if len(started) == UNDER_WAY_PER_CARD:
            break
        await asyncio.sleep(0.01)
    assert len(started) == UNDER_WAY_PER_CARD
    # WHEN it makes one more
    d = await asyncio.wait_for(engine.call("c1", "net.fetch", None,
                                           {"url": "https://api.example.org/more"}), 30)
    # THEN it is refused at once, nothing sent, and the refusal is logged
    assert (d.outcome, d.code, d.reason) == ("denied", "CARD_LIMIT", "under-way"), d
    assert str(UNDER_WAY_PER_CARD) in d.message
    assert len(started) == UNDER_WAY_PER_CARD
    rows = [r for r in engine.log_rows() if r["call"] == "net.fetch"]
    assert (rows[-1]["outcome"], rows[-1]["code"], rows[-1]["reason"]) == \
        ("denied", "CARD_LIMIT", "under-way")
    # AND another card is not held back by it
    other = fetch("c2", 0)
    for _ in polls():
        if len(started) == UNDER_WAY_PER_CARD + 1:
            break
        await asyncio.sleep(0.01)
    assert len(started) == UNDER_WAY_PER_CARD + 1
    # WHEN the fetches end
    release.set()
    done = await asyncio.wait_for(asyncio.gather(*flying, other), 30)
    assert all(x.outcome == "ok" for x in done)
    # THEN the card may fetch again
    again = await asyncio.wait_for(engine.call("c1", "net.fetch", None,
                                               {"url": "https://api.example.org/again"}), 5)
    assert again.outcome == "ok", again
