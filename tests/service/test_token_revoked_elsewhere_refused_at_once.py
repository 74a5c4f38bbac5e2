"""A service token revoked through one server is refused by every server on the store at
its next request (SPEC §10: every rule holds across all engines on one database;
§10.1: a revoked token is unknown).

Once ``DELETE /v1/tokens/{id}`` (or the removal of the token's node) has returned
through server A, server B answers the token's next request 401, on the hot lane
(``POST /v1/calls`` on a keep-alive connection, `TokenStore.recall`) and on
FastAPI's routes alike, and an event stream B serves with it ends by then: B
catches up with the store's change feed, which names the revoked tokens, once a
turn of its loop before it trusts its token cache (`engine.service.auth`).

(Found in round 18: B trusted its cached entry for `CACHE_SECONDS`, 2 s, before
asking the store again: 200 through B after the revocation through A, then 401 2.1 s
later.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.servers_on_one_store import mint, ok, setup
from tests.service.servers_on_one_store import start as start_on_sqlite

CALL = {"card": "c1", "call": "clipboard.write", "target": None, "args": {"text": "hi"}}


@pytest.fixture(params=["sqlite", "postgres"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """Servers A and B (``arrowgate serve`` processes) on one store."""
    if request.param == "sqlite":
        db = tmp_path / "a.db"
        a = start_on_sqlite(db)
        try:
            b = start_on_sqlite(db, tmp_path / "b.operator-token")
        except BaseException:
            a.stop()
            raise
    else:
        from tests.pg.servers import start as start_on_pg

        dsn = request.getfixturevalue("pg_dsn")
        a = start_on_pg(dsn, tmp_path, "a")
        try:
            b = start_on_pg(dsn, tmp_path, "b")
        except BaseException:
            a.stop()
            raise
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def _card_on_b(a: Any, b: Any, tmp_path: Path) -> tuple[httpx.Client, dict[str, Any]]:
    """The canvas made through A; c1's token minted through A and working through B
    (its entry in B's token cache, its connection's memo). B's keep-alive client and
    the token's id and secret."""
    op_a = a.client()
    setup(op_a, tmp_path / "ws")
    minted = ok(op_a.post("/v1/tokens", json={"principal": "card:c1"}))
    card_b = b.client(minted["token"])
    assert card_b.post("/v1/calls", json=CALL).status_code == 200
    assert card_b.get("/v1/holds").status_code == 200
    assert card_b.post("/v1/calls", json=CALL).status_code == 200  # the memo's answer
    return card_b, minted


def test_a_token_revoked_through_a_is_refused_by_b_at_its_next_request(
        pair: tuple[Any, Any], tmp_path: Path) -> None:
    a, b = pair
    card_b, minted = _card_on_b(a, b, tmp_path)
    assert a.client().delete(f"/v1/tokens/{minted['id']}").status_code == 204
    # No sleep: the revocation has returned through A.
    assert card_b.post("/v1/calls", json=CALL).status_code == 401
    assert card_b.get("/v1/holds").status_code == 401
    assert b.client(minted["token"]).post("/v1/calls", json=CALL).status_code == 401


def test_a_node_removed_through_a_makes_its_token_refused_by_b_at_once(
        pair: tuple[Any, Any], tmp_path: Path) -> None:
    a, b = pair
    card_b, _minted = _card_on_b(a, b, tmp_path)
    agent_token = mint(a.client(), "agent:a0")
    agent_b = b.client(agent_token)
    assert agent_b.get("/v1/agents/a0/tools").status_code == 200
    op_a = a.client()
    assert op_a.delete("/v1/nodes/c1").status_code in (200, 204)
    assert card_b.post("/v1/calls", json=CALL).status_code == 401
    assert card_b.get("/v1/holds").status_code == 401
    assert op_a.delete("/v1/nodes/a0").status_code in (200, 204)
    assert agent_b.get("/v1/agents/a0/tools").status_code == 401


@pytest.mark.parametrize("query", ["", "?card=%63%31"], ids=["lane", "fastapi-route"])
def test_a_stream_on_b_ends_by_the_next_request_b_answers(
        pair: tuple[Any, Any], tmp_path: Path, query: str) -> None:
    """B's event stream with the token ends as soon as B takes any request after the
    revocation through A (B catches up then), well within its heartbeat."""
    a, b = pair
    _card_b, minted = _card_on_b(a, b, tmp_path)
    lines: list[str] = []
    ended = threading.Event()

    def listen() -> None:
        try:
            with b.client(minted["token"], timeout=30).stream("GET",
                                                              "/v1/events" + query) as s:
                for line in s.iter_lines():
                    lines.append(line)
        except Exception:  # noqa: BLE001 - the stream ending any way is fine
            pass
        ended.set()

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    deadline = time.monotonic() + 10
    while not lines and time.monotonic() < deadline:
        time.sleep(0.02)
    assert lines and lines[0].startswith(": arrowgate events"), lines
    assert a.client().delete(f"/v1/tokens/{minted['id']}").status_code == 204
    assert b.client().get("/v1/health").status_code == 200  # answered without a token
    assert b.client().get("/v1/holds").status_code == 200  # the operator's: a token check
    # Well within the token cache's 2 s (and the 15 s heartbeat).
    assert ended.wait(1.0), lines
