"""Servers on one store minting for the same node at once never pass `MAX_LIVE_TOKENS`
between them: the count and the insert are one write of the store (SQLite: one
``BEGIN IMMEDIATE``; PostgreSQL: one transaction under the principal's advisory lock).

(Issue 16, round 33: the count was read, then the token written, in two steps; eight
servers minting the 64th token of one agent together could each count 63 before any
wrote: two stood, 65 live tokens.) Each "server" here is a `TokenStore` on a table of its own
(its own connections to the store, as another process has), minting through
`mint_node_token` in its own worker thread.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from engine.core.errors import InvalidArgument
from engine.service.auth import TokenStore
from engine.service.made import Made
from engine.service.minting import MAX_LIVE_TOKENS, mint_node_token
from tests.conftest import open_store

SERVERS = 8


def _where(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store == "postgres":
        return str(request.getfixturevalue("pg_dsn"))
    return str(tmp_path / "arrowgate.db")


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_mints_racing_for_one_node_stop_at_the_bound(
        store: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """One token short of the bound, eight mints at once: exactly one stands, seven are
    refused too-many-tokens, and the agent holds the bound's worth."""
    engine = open_store(_where(store, tmp_path, request))
    servers = [TokenStore(engine.store.tokens()) for _ in range(SERVERS)]
    try:
        await engine.create_workspace("w1", tmp_path)
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        made = Made(engine)
        # GIVEN an agent one token short of its bound
        for _ in range(MAX_LIVE_TOKENS - 1):
            await mint_node_token(engine, servers[0], made, "agent", "a1")
        # WHEN eight servers mint for it at the same moment
        results = await asyncio.gather(
            *(mint_node_token(engine, server, made, "agent", "a1") for server in servers),
            return_exceptions=True)
        # THEN one mint stands and the others are refused, naming the bound
        minted = [r for r in results if isinstance(r, tuple)]
        refused = [r for r in results if isinstance(r, InvalidArgument)]
        assert len(minted) == 1 and len(refused) == SERVERS - 1, results
        assert all(r.reason == "too-many-tokens" and str(MAX_LIVE_TOKENS) in str(r)
                   for r in refused), refused
        live = [row for row in servers[0].table.listing() if row.principal == "agent:a1"]
        assert len(live) == MAX_LIVE_TOKENS
    finally:
        for server in servers:
            server.close()
        engine.close()


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_two_tables_inserting_in_threads_never_pass_the_bound(
        store: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Two tables of the store (two servers' connections), in two threads, each adding
    tokens for one principal as fast as they can: the principal ends with exactly the
    bound, however the inserts interleave."""
    engine = open_store(_where(store, tmp_path, request))
    tables = [engine.store.tokens() for _ in range(2)]
    start = threading.Barrier(2)
    added = [0, 0]

    def mint(which: int) -> None:
        start.wait()
        for n in range(MAX_LIVE_TOKENS):
            if tables[which].insert_within(f"tok_{which}_{n}", f"digest-{which}-{n}",
                                           "card:c1", 1000.0 + n, MAX_LIVE_TOKENS) is None:
                added[which] += 1

    try:
        threads = [threading.Thread(target=mint, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert sum(added) == MAX_LIVE_TOKENS, added
        live = [row for row in tables[0].listing() if row.principal == "card:c1"]
        assert len(live) == MAX_LIVE_TOKENS
        # AND a revoked token makes room for exactly one
        assert tables[1].revoke(live[0].id, 2000.0)
        assert tables[0].insert_within("tok_x", "digest-x", "card:c1", 2001.0,
                                       MAX_LIVE_TOKENS) is None
        assert tables[1].insert_within("tok_y", "digest-y", "card:c1", 2002.0,
                                       MAX_LIVE_TOKENS) == MAX_LIVE_TOKENS
    finally:
        for table in tables:
            table.close()
        engine.close()
