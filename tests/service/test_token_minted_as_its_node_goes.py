"""A token minted while its node is removed never stands for the node made after under
that id (SPEC §10.1: a card token acts only as that card), on both stores.

Removing a node revokes its tokens in the same write. (Found by a helper, svc25: ``POST
/v1/tokens`` checked that the node was there, then wrote the token in a worker thread;
a removal answered meanwhile revoked the tokens it found, not the one being written.
The token stood, and once a card was added under the id again — another vendor's —
it acted as that card.)
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine import Engine, World, file_digests
from engine.service.app import Service, asgi_app
from engine.service.auth import Peer, TokenStore
from engine.service.listen import operator_token

PKG = {"name": "acme.one", "version": "1.0.0", "permissions": {"agents.read": {}}}
OTHER = {"name": "other.vendor", "version": "1.0.0", "permissions": {"agents.read": {}}}


@pytest.fixture(params=["sqlite", "postgres"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Engine, TokenStore]]:
    """An engine and its token store, on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
        tokens = TokenStore(tmp_path / "a.db")
    else:
        dsn = request.getfixturevalue("pg_dsn")
        engine = Engine.open(store=dsn, world=World(net=None, fs=None))
        tokens = TokenStore(engine.store.tokens())
    try:
        yield engine, tokens
    finally:
        tokens.close()
        engine.close()


def _as_this_process(app: Any) -> Callable[..., Any]:
    """``app`` with every request's peer this process (a person's, as the tests' own)."""
    async def with_peer(scope: dict[str, Any], receive: Any, send: Any) -> None:
        scope["arrowgate.peer"] = Peer(os.getpid(), os.getuid())
        await app(scope, receive, send)
    return with_peer


async def test_a_token_minted_as_its_card_is_removed_does_not_stand(
        opened: tuple[Engine, TokenStore], tmp_path: Path) -> None:
    """The removal lands while the mint writes its token; a card is added under the id
    again: the mint is refused and its token acts as nobody."""
    engine, tokens = opened
    # GIVEN card c1 of acme.one, and other.vendor offered and installed
    await engine.create_workspace("w1", str(tmp_path))
    for manifest in (PKG, OTHER):
        await engine.offer(manifest["name"], manifest,
                           file_digests({"manifest.json": json.dumps(manifest)}))
        await engine.install(manifest["name"])
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.one"}, workspace="w1")
    app = _as_this_process(asgi_app(Service(engine, tokens)))
    operator = operator_token(tokens, tmp_path / "tok")
    # AND the token table's write held until the test lets it go
    writing, go = threading.Event(), threading.Event()
    insert = tokens.table.insert_within  # the bounded mint's (`TokenStore.mint_within`)

    def held_insert(*args: Any) -> int | None:
        writing.set()
        assert go.wait(30)
        return insert(*args)

    tokens.table.insert_within = held_insert  # type: ignore[method-assign]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://arrowgate",
                                 headers={"Authorization": f"Bearer {operator}"}) as op:
        # WHEN the operator mints c1's token
        minting = asyncio.ensure_future(op.post("/v1/tokens", json={"principal": "card:c1"}))
        assert await asyncio.to_thread(writing.wait, 30)
        # AND, while it is written, c1 is removed and another vendor's card added as c1
        assert (await op.delete("/v1/nodes/c1")).status_code == 204
        r = await op.post("/v1/workspaces/w1/nodes",
                          json={"id": "c1", "type": "card", "package": "other.vendor"})
        assert r.status_code == 201, r.text
        go.set()
        minted = await minting
        # THEN the mint is refused: the card it named is gone
        assert minted.status_code == 404, minted.text
        assert minted.json()["reason"] == "missing-card"
        # AND no token written for it acts as the new c1
        tokens.table.insert_within = insert  # type: ignore[method-assign]
        ids = tokens.table.ids_of("card:c1")
        assert len(ids) == 1
        assert not await tokens.revoke(ids[0]), "the token minted for the removed c1 stands"
