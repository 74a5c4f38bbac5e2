"""Round 16 (428ca0c): "A log row or history entry altered by hand is shown flagged,
never a 500" — readers go through `engine.store.decoding`.

Rule: `History.replaced_nodes` (what a card's event feed asks on every look) decodes
each subject through `engine.store.decoding`; an entry that does not read as the engine
writes it counts as every node replaced (fail closed): the card's feed is made afresh.

(Found by a helper: `engine.store.history.replaced` ``json.loads``-ed each subject raw,
so one entry altered by hand made every ``GET /v1/events`` of a card whose feed was
older than it fail: JSONDecodeError, or AttributeError for JSON that is no object.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import Engine
from engine.service.events import Feeds
from engine.store.history import Replaced, replaced


@pytest.mark.parametrize("stored", ["not json", "[1, 2]"])
async def test_a_cards_feed_outlives_a_history_entry_altered_by_hand(
        world: Engine, db_path: Path, stored: str) -> None:
    """The card's feed is got afresh (and the entry shown flagged by `entries`)."""
    # GIVEN card c1's feed, then a node removed (an entry after the feed's)
    feeds = Feeds(world)
    old = feeds.get("c1")
    await world.remove_node("n1")
    # WHEN someone alters that entry's subject by hand
    conn = sqlite3.connect(db_path)
    conn.execute("update consent set subject = ? where action = 'node.remove'", [stored])
    conn.commit()
    conn.close()
    # THEN the history shows it flagged, and the card's feed is still there
    assert any("unreadable" in e for e in world.history.entries())
    try:
        fresh = feeds.get("c1")
    except Exception as exc:  # noqa: BLE001 - what the service would answer 500
        pytest.fail(f"the card's feed fails on the altered entry: {exc!r}")
    finally:
        feeds.drop("c1")
    assert fresh is not old, "a feed kept across an entry nobody can read"


@pytest.mark.parametrize("stored", ["not json", "[1, 2]", '{"node": 7}',
                                    '{"node": "n1", "fields": [1]}', "[" * 100_000])
def test_an_unreadable_entry_counts_as_every_node_replaced(stored: str) -> None:
    """It may have named any node: no node is taken as the one a reader knew."""
    found = replaced([("node.remove", '{"node": "n1"}'), ("node.set", stored)])
    assert found.unreadable and "c1" in found and "n1" in found
    # No partial list of nodes beside it to be mistaken for the answer.
    assert found == Replaced(unreadable=True)


def test_readable_entries_name_the_nodes_replaced() -> None:
    """A removal, and a card given another package; not a node set otherwise."""
    rows = [("node.remove", '{"node": "n1"}'),
            ("node.set", '{"node": "c2", "fields": {"package": "acme.q"}}'),
            ("node.set", '{"node": "c3", "fields": {"visible": false}}')]
    assert replaced(rows) == Replaced(frozenset({"n1", "c2"}))
    assert "c3" not in replaced(rows)
