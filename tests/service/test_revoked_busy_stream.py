"""A stream whose token another process revoked ends even while its card is busy.

The token is confirmed again (`Standing.stands`) before an event once its last
confirmation is `CACHE_SECONDS` old, whether or not events were written meanwhile.
(Round 13's review: it was asked only when a heartbeat's ping was due, which a card
with an event at least once a heartbeat never reached: the stream went on
delivering for as long as the card was busy. Since m15 it is asked per event, not
per heartbeat: `test_stream_ends_on_revocation_elsewhere`.)
"""


from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.service.auth import CACHE_SECONDS, TokenStore
from tests.service.conftest import Running, build_canvas


@pytest.mark.parametrize("query", ["", "?card=%63%31"], ids=["lane", "fastapi-route"])
def test_a_busy_stream_ends_once_another_process_revoked_its_token(
        serve_at: Callable[..., Running], tmp_path: Path, query: str) -> None:
    heartbeat = 0.3
    server = serve_at(heartbeat=heartbeat)
    op = server.client()
    build_canvas(op, tmp_path / "proj")
    minted = op.post("/v1/tokens", json={"principal": "card:c1"}).json()
    card = server.client(token=minted["token"])
    stop = threading.Event()

    def busy() -> None:  # an event for c1 every 0.1 s (< one heartbeat)
        grant = True
        while not stop.is_set():
            verb = "grant" if grant else "revoke"
            op.post(f"/v1/packages/acme.standup/{verb}", json={"permission": "clipboard.write"})
            grant = not grant
            time.sleep(0.1)

    late: list[float] = []
    worker = threading.Thread(target=busy, daemon=True)
    try:
        with card.stream("GET", "/v1/events" + query) as r:
            assert r.status_code == 200
            lines = r.iter_lines()
            assert next(lines).startswith(": arrowgate events")
            worker.start()
            other = TokenStore(server.db)  # as another process sharing the database
            try:
                assert asyncio.run(other.revoke(minted["id"]))
            finally:
                other.close()
            revoked = time.monotonic()
            # The cache trusts the token CACHE_SECONDS; then a few heartbeats' grace.
            due = revoked + CACHE_SECONDS + 4 * heartbeat
            for line in lines:
                now = time.monotonic()
                if line.startswith("event: ") and now > due:
                    late.append(now - revoked)
                if now > due + 3:
                    break
    finally:
        stop.set()
        worker.join(10)
    assert not late, f"{len(late)} events delivered to the revoked token between " \
                     f"{late[0]:.1f} s and {late[-1]:.1f} s after its revocation"
