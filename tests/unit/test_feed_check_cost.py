"""Opening a card's event stream reads only the consent history recorded since the last
opening, not all of it since the feed was made.

(Found by a third review, round 14: `Feeds.get` asked the history from the feed's
making at every opening, and a card's token can add entries at will — each refused
``DELETE /v1/nodes/x`` is one — so every opening of every card's stream read more
and more of them, on the server's loop: ~0.17 µs a row, 170 ms at 1 M.)
"""

from __future__ import annotations

import asyncio

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.errors import ConsentError
from engine.service.events import Feeds


def _steps(engine: Engine, feeds: Feeds, card: str) -> int:
    """SQLite VM steps (in hundreds) that ``feeds.get(card)`` costs."""
    conn = engine.history.db.conn  # type: ignore[attr-defined]
    count = 0

    def tick() -> int:
        nonlocal count
        count += 1
        return 0

    conn.set_progress_handler(tick, 100)
    try:
        feeds.get(card)
    finally:
        conn.set_progress_handler(None, 100)
    return count


async def _refused_removals(engine: Engine, clock: VirtualClock, n: int) -> None:
    """``n`` refused node removals by card c1 (as its token's DELETE /v1/nodes/... makes),
    100 a minute: each is an entry of its own (beyond the card's ``denial_log_limit`` of
    120 in any 60 s they would be summed up in one, round 27)."""
    async def one(i: int) -> None:
        try:
            await engine.remove_node(f"x{i}", by="card:c1")
        except ConsentError:
            pass

    for start in range(0, n, 100):
        await asyncio.gather(*(one(i) for i in range(start, min(n, start + 100))))
        clock.t += 61


async def test_a_stream_open_does_not_rescan_the_history(world: Engine,
                                                         clock: VirtualClock) -> None:
    """A stream open costs the same however many consent entries were written since
    the feed was made (and already looked at by the opens before it)."""
    # GIVEN c1's feed, made and opened once
    feeds = Feeds(world)
    feeds.get("c1")
    quiet = _steps(world, feeds, "c1")
    # WHEN c1's token has had 5,000 removals refused, and a stream opens once more
    await _refused_removals(world, clock, 5000)
    assert world.history.newest() > 5000
    feeds.get("c1")
    # THEN the next open does not read those entries again
    again = _steps(world, feeds, "c1")
    assert again <= quiet + 20, (quiet, again)
    feeds.close()
