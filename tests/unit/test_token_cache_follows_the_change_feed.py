"""The token cache learns of revocations committed elsewhere from the store's change feed,
and reads nothing more for it while nothing changed.

Rule: before a turn of the loop trusts a cached token, the `TokenStore` catches up
with the store once (`TokenStore.follow`, `Engine.catch_up`: one ``pragma
data_version`` on SQLite when nothing changed), and the catch-up names the tokens another connection revoked
(`engine.store.tokenfeed.TokenFeed`): those are dropped at once, every other entry
is kept, and a token not revoked is answered without reading its row again.

(Found in round 18: a token revoked through another server stood in this server's
cache for `CACHE_SECONDS`, 2 s.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine import Engine, World
from engine.service.auth import TokenStore
from engine.store.tokens import SQLiteTokens


class CountingTable(SQLiteTokens):
    """The token table, counting the rows it is asked for."""

    finds = 0

    def find(self, digest: str) -> tuple[str, str, str] | None:
        self.finds += 1
        return super().find(digest)


async def test_the_cache_drops_what_another_connection_revoked_and_reads_nothing_else(
        tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    engine = Engine.open(db, world=World(net=None, fs=None))
    other_engine = Engine.open(db, world=World(net=None, fs=None))
    syncs = 0

    def sync() -> None:
        nonlocal syncs
        syncs += 1
        engine.catch_up()

    table = CountingTable(db)
    here = TokenStore(table)
    here.follow(sync, engine.store.token_feed)
    elsewhere = TokenStore(db)
    elsewhere.follow(other_engine.catch_up, other_engine.store.token_feed)
    try:
        kept_id, kept = await elsewhere.mint("card:c1")
        gone_id, gone = await elsewhere.mint("card:c2")
        assert here.lookup(kept) == (kept_id, here.lookup(kept)[1])  # type: ignore[index]
        assert here.lookup(gone) is not None
        assert table.finds == 2
        # Nothing changed: many checks over a few turns read no row, and catch up
        # once a turn at most.
        syncs = 0
        for _turn in range(5):
            for _ in range(100):
                assert here.lookup(kept) is not None
            await asyncio.sleep(0)
        assert table.finds == 2
        assert 1 <= syncs <= 5
        # Revoked through the other: refused here at the next check, no sleep.
        assert await elsewhere.revoke(gone_id)
        await asyncio.sleep(0)  # a new turn (a request that came after the revocation)
        assert here.lookup(gone) is None
        assert table.finds == 3  # the feed dropped it: read once, and not found
        assert here.lookup(kept) is not None
        assert table.finds == 3  # the other token's entry stands, unread
    finally:
        here.close()
        elsewhere.close()
        other_engine.close()
        engine.close()
