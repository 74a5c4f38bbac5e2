"""The service's card feeds let go of a card removed by another process.

A card's feed (`engine.service.events.Feeds`) holds its subscription and a
ring of its last events; the server that removes a card drops its feed at
once (`ServiceContext.node_removed`). A card removed by another process (the
command line, another server, the Python API) ends its feed when the engine
catches up (its subscription ends: `EventHub.let_go`), and the ended feed
leaves the service's map, so churning cards elsewhere never grows it.

Found in round 18: only a later feed asked for under the same id replaced an
ended one; every other removed card's feed stayed in the map, ring and all.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine.service.events import Feeds

from ..conftest import manifest, offer_install

ROUNDS = 3


async def test_feeds_of_cards_removed_elsewhere_leave_the_map(make_engine: Any,
                                                              tmp_path: Path) -> None:
    """Cards whose feeds were made, removed by another engine on the store: once the
    serving engine has caught up, the map holds none of their feeds."""
    # GIVEN a serving engine with card feeds, and another engine on its store
    served = make_engine()
    (tmp_path / "ws").mkdir()
    await served.create_workspace("w1", tmp_path / "ws")
    await offer_install(served, manifest("acme.feed", {"cards.connected": {}}))
    other = make_engine()
    feeds = Feeds(served)
    for round_ in range(ROUNDS):
        card = f"c{round_}"
        await served.add_node({"id": card, "type": "card", "package": "acme.feed"},
                              workspace="w1")
        feed = feeds.get(card)
        # WHEN the other engine removes the card, and the serving one catches up
        other.catch_up()
        await other.remove_node(card)
        served.catch_up()
        await asyncio.sleep(0)  # the feed's end is seen in the next turn of the loop
        # THEN its feed has ended and left the map
        assert feed.closed
    assert feeds._feeds == {}  # noqa: SLF001 - the map is the service's own
    feeds.close()
