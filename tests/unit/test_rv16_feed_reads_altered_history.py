"""Round 16 (428ca0c): "A log row or history entry altered by hand is shown flagged,
never a 500" — readers go through `engine.store.decoding`.

(rv16: `engine.store.history.replaced` still ``json.loads`` each ``node.remove`` /
``node.set`` subject raw. `Feeds.get` reads it on every look at a card's feed, so one
entry altered by hand makes every ``GET /v1/events`` of a card whose feed is older than
it fail (JSONDecodeError, AttributeError for a subject that is JSON but no object),
where `ConsentHistory.entries` shows the same entry flagged.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import Engine
from engine.service.events import Feeds


@pytest.mark.parametrize("stored", ["not json", "[1, 2]"])
async def test_a_cards_feed_outlives_a_history_entry_altered_by_hand(
        world: Engine, db_path: Path, stored: str) -> None:
    """The card's feed is still got (and the entry shown flagged by `entries`)."""
    # GIVEN card c1's feed, then a node removed (an entry after the feed's)
    feeds = Feeds(world)
    feeds.get("c1")
    await world.remove_node("n1")
    # WHEN someone alters that entry's subject by hand
    conn = sqlite3.connect(db_path)
    conn.execute("update consent set subject = ? where action = 'node.remove'", [stored])
    conn.commit()
    conn.close()
    # THEN the history shows it flagged, and the card's feed is still there
    assert any("unreadable" in e for e in world.history.entries())
    try:
        feeds.get("c1")
    except Exception as exc:  # noqa: BLE001 - what the service would answer 500
        pytest.fail(f"the card's feed fails on the altered entry: {exc!r}")
    finally:
        for card in ("c1",):
            feeds.drop(card)
