"""An event stream ends when the token it was opened with is revoked.

``DELETE /v1/tokens/{id}`` makes the token's next request a 401 (checked at once
for calls, the fast lane's per-connection memo included: test_token_memo). A
``GET /v1/events`` stream opened with the token before must not go on
delivering the card's events — permission changes, ``tool.call`` events with an
agent's arguments — to a token that is now unknown (SPEC §10.1): it ends, on
both of the server's ways of streaming (the lane's `CardFeed.serve` and
FastAPI's route), and a revocation made through another connection to the
store (another process sharing the database) is seen at the next heartbeat.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.service.auth import TokenStore
from tests.service.conftest import Running, build_canvas


def _events(lines: Iterator[str]) -> Callable[[], str | None]:
    def next_event() -> str | None:
        for line in lines:
            if line.startswith("event: "):
                return line[len("event: "):]
        return None  # the stream ended
    return next_event


@pytest.mark.parametrize("query", ["", "?card=%63%31"], ids=["lane", "fastapi-route"])
def test_a_revoked_token_s_event_stream_gets_no_more_events(unix_server: Running,
                                                            tmp_path: Path, query: str) -> None:
    """``?card=%63%31`` is c1 written so that the lane leaves it to FastAPI's route."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    minted = op.post("/v1/tokens", json={"principal": "card:c1"}).json()
    card = unix_server.client(token=minted["token"])
    events: list[str] = []
    with card.stream("GET", "/v1/events" + query) as r:
        assert r.status_code == 200
        next_event = _events(r.iter_lines())
        assert op.post("/v1/packages/acme.standup/grant",
                       json={"permission": "clipboard.write"}).status_code == 200
        assert next_event() == "permissions.changed"  # the stream works
        assert op.delete(f"/v1/tokens/{minted['id']}").status_code == 204
        assert card.post("/v1/calls", json={"card": "c1", "call": "agents.list"}
                         ).status_code == 401  # revoked for requests
        assert op.post("/v1/packages/acme.standup/revoke",
                       json={"permission": "clipboard.write"}).status_code == 200
        # The change made after the revocation must not reach the revoked token:
        # the stream ends (None) rather than deliver it.
        got = next_event()
        if got is not None:
            events.append(got)
    assert events == [], f"delivered after the token was revoked: {events}"


@pytest.mark.parametrize("query", ["", "?card=%63%31"], ids=["lane", "fastapi-route"])
def test_a_stream_ends_at_a_heartbeat_once_another_process_revoked_its_token(
        serve_at: Callable[..., Running], tmp_path: Path, query: str) -> None:
    """Revoked through another connection to the table (as another process would),
    the server learns it only by asking the store: at the next heartbeat past its
    cache's time (`CACHE_SECONDS`), the stream ends."""
    server = serve_at(heartbeat=0.2)
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    minted = op.post("/v1/tokens", json={"principal": "card:c1"}).json()
    card = server.client(token=minted["token"])
    with card.stream("GET", "/v1/events" + query) as r:
        assert r.status_code == 200
        lines = r.iter_lines()
        assert next(lines).startswith(": arrowgate events")
        other = TokenStore(server.db)
        try:
            assert asyncio.run(other.revoke(minted["id"]))
        finally:
            other.close()
        began = time.monotonic()
        for _line in lines:  # heartbeats, until the server ends the stream
            assert time.monotonic() - began < 20, "the stream outlived its token"
        assert time.monotonic() - began < 20
