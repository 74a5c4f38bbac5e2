"""SPEC §10, §10.1: a service token revoked or deleted outside the engine (at a ``sqlite3``
or ``psql`` shell) is refused by every running server at its next check, on either
store: the server's token cache is told by the store's catch-up, which reads the
change the edit recorded.

Rule: an UPDATE or DELETE of ``service_tokens`` rows, by whatever writer, is a change on
the store's feed naming the token (kind ``token``, its id).

(Found in round 24: on PostgreSQL only the engine's own revocation recorded a change, so a
token revoked at ``psql`` stood in every running server's cache, accepted, until it
restarted.)
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine import Engine
from engine.service.auth import TokenStore
from tests.durability.targets import Target

EDITS = {
    "revoke": "update service_tokens set revoked = 1 where id = '{id}'",
    "delete": "delete from service_tokens where id = '{id}'",
}


@pytest.mark.parametrize("edit", sorted(EDITS))
async def test_a_token_revoked_by_hand_is_refused_at_the_next_check(
        make_engine: Any, target: Target, edit: str) -> None:
    engine: Engine = make_engine()
    tokens = TokenStore(engine.store.tokens())
    tokens.follow(engine.catch_up, engine.store.token_feed)
    try:
        token_id, token = await tokens.mint("card:c1")
        assert tokens.lookup(token) is not None  # checked once: cached
        target.execute(EDITS[edit].format(id=token_id))
        await asyncio.sleep(0)  # a new turn of the loop: a request after the edit
        assert tokens.lookup(token) is None, f"a token {edit}d by hand is still accepted"
    finally:
        tokens.close()
