"""A card feed that cannot be made (the store failed a read) leaves no subscription
behind.

(Found by a third review, round 14: the feed subscribed first and read the history
second; a store that failed the read left a subscription nobody held, buffering up
to ``KEEP`` events of the card for good, one more for every reconnecting client.)
"""

from __future__ import annotations

import pytest

from engine import Engine
from engine.core.errors import StoreFailed
from engine.service.events import Feeds


def _open_subscriptions(engine: Engine, card: str) -> int:
    """How many subscriptions of ``card`` the engine's hub holds open."""
    return len(engine.events._subs.get(card, []))


async def test_a_feed_the_store_failed_to_make_leaves_no_subscription(
        world: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream open that fails on the store leaves the engine's subscriptions as they were."""
    before = _open_subscriptions(world, "c1")

    def unreachable() -> int:
        raise StoreFailed("cannot reach the store", reason="connection")

    # GIVEN a store that fails the history's read
    monkeypatch.setattr(world.history, "newest", unreachable)
    feeds = Feeds(world)
    # WHEN streams of c1 open three times (each fails)
    for _ in range(3):
        with pytest.raises(StoreFailed):
            feeds.get("c1")
    # THEN no subscription was left open by them
    assert _open_subscriptions(world, "c1") == before
