"""A token check that failed in a moment (a connection the server dropped as it
restarted) is asked of the store again a moment later, not only after `OUTAGE_SECONDS`;
one that held the loop for long (a server away, the pool's whole wait) still keeps
the store from being asked again for that long, so health is never stalled behind
one token after another (tests/pg/test_token_check_fails_fast.py).

Found in round 32: after a PostgreSQL restart of under a second, every request whose
token the cache could not answer was refused 503 STORE_FAILED for 2 s, the server long
back, because the first check on a dropped connection failed and the failure was
remembered whole for `OUTAGE_SECONDS`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.core.errors import StoreFailed
from engine.service.auth import CACHE_SECONDS, OUTAGE_SECONDS, TokenStore
from engine.service.problems import error_response
from engine.store.base import TokenTable
from tests.conftest import open_store


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Faltering:
    """The store's token table, whose next reads fail as told: at once (a dropped
    connection), or after ``took`` seconds of the clock (the pool's wait)."""

    def __init__(self, table: TokenTable, clock: _Clock) -> None:
        self.table = table
        self.clock = clock
        self.fail_next: float | None = None  # seconds the failing read takes
        self.finds = 0

    def find(self, digest: str) -> tuple[str, str, str] | None:
        self.finds += 1
        if self.fail_next is not None:
            took, self.fail_next = self.fail_next, None
            self.clock.now += took
            raise StoreFailed("the connection was lost (the server restarted)",
                              reason="connection")
        return self.table.find(digest)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.table, name)


def test_a_check_that_failed_at_once_is_asked_again_a_moment_later(store: str) -> None:
    engine = open_store(store)
    clock = _Clock()
    table = _Faltering(engine.store.tokens(), clock)
    tokens = TokenStore(table, clock=clock)  # type: ignore[arg-type]
    try:
        _id, token = tokens.mint_sync("card:c1")
        assert tokens.lookup(token) is not None
        clock.now += CACHE_SECONDS + 0.1  # its entry is old: the store is asked
        # GIVEN a check that failed at once, the server restarting under it
        table.fail_next = 0.0
        with pytest.raises(StoreFailed):
            tokens.lookup(token)
        # WHEN it is checked again a quarter of a second later, the server back
        clock.now += 0.25
        # THEN the store is asked, and the token stands
        assert tokens.lookup(token) is not None
    finally:
        tokens.close()
        engine.close()


def test_a_check_that_held_the_loop_long_keeps_the_store_unasked_a_while(store: str) -> None:
    engine = open_store(store)
    clock = _Clock()
    table = _Faltering(engine.store.tokens(), clock)
    tokens = TokenStore(table, clock=clock)  # type: ignore[arg-type]
    try:
        _id, token = tokens.mint_sync("card:c1")
        clock.now += CACHE_SECONDS + 0.1
        # GIVEN a check that waited the pool's whole second and failed
        table.fail_next = 1.0
        with pytest.raises(StoreFailed):
            tokens.lookup(token)
        asked = table.finds
        # WHEN checked again a quarter of a second later, THEN it fails at once, the
        # store not asked (another second on the loop would stall everyone)
        clock.now += 0.25
        with pytest.raises(StoreFailed, match="asked again"):
            tokens.lookup(token)
        assert table.finds == asked
        # AND once the window is over it is asked again
        clock.now += OUTAGE_SECONDS
        assert tokens.lookup(token) is not None
    finally:
        tokens.close()
        engine.close()


def test_the_503_while_unasked_says_when_in_retry_after(store: str) -> None:
    """The refusal that says "asked again in N s" says it as ``Retry-After`` too (RFC 9110
    §10.2.3), in whole seconds rounded up, and as ``retry_after`` in its problem.
    (Round 34: said only in its words.)"""
    engine = open_store(store)
    clock = _Clock()
    table = _Faltering(engine.store.tokens(), clock)
    tokens = TokenStore(table, clock=clock)  # type: ignore[arg-type]
    try:
        _id, token = tokens.mint_sync("card:c1")
        clock.now += CACHE_SECONDS + 0.1
        # GIVEN a check that held the loop for 0.3 s and failed: unasked for 1.2 s
        table.fail_next = 0.3
        with pytest.raises(StoreFailed):
            tokens.lookup(token)
        # WHEN checked again 0.1 s later
        clock.now += 0.1
        with pytest.raises(StoreFailed) as refused:
            tokens.lookup(token)
        # THEN its answer is 503 with Retry-After 2 (1.1 s rounded up)
        answer = error_response(refused.value)
        assert answer.status_code == 503 and answer.headers["retry-after"] == "2"
        assert json.loads(answer.body)["retry_after"] == pytest.approx(1.1)
    finally:
        tokens.close()
        engine.close()
