"""The hold timers survive a failing store: a held prompt expires at its deadline after an outage.

Rule: `Engine.run_timers` skips a round whose `Context.tick` fails with
`StoreFailed` (one line logged when the outage begins, one when it ends) and
resumes once the database is back, so a hold not answered within the hold
timeout still expires (SPEC §7 "silence is never consent"), and SIGTERM then
ends ``arrowgate serve`` cleanly (exit 0).

(Found by a helper: a ~2 s PostgreSQL outage ended the timer task for good — holds
no longer expired, and shutdown re-raised its error, exit 1.)
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.pg.servers import pg_restart, start
from tests.pgfixtures import with_database
from tests.pgserver import PgServer


def _held(server, folder: Path):
    """A held prompt of card c0 to the dangerous agent a1 (hold timeout 4 s): the card's
    client and the prompt's id."""
    op = server.client()
    assert op.post("/v1/workspaces", json={"id": "w1", "folder": str(folder),
                                           "settings": {"hold_timeout": 4}}).status_code == 201
    manifest = {"name": "acme.p", "version": "1.0.0", "permissions": {"agents.prompt": {}}}
    assert op.post("/v1/packages", json={"manifest": manifest}).status_code in (200, 201)
    assert op.post("/v1/packages/acme.p/install", json={}).status_code == 200
    assert op.post("/v1/workspaces/w1/nodes", json={"id": "a1", "type": "agent",
                                                    "dangerous": True}).status_code == 201
    assert op.post("/v1/workspaces/w1/nodes", json={"id": "c0", "type": "card",
                                                    "package": "acme.p"}).status_code == 201
    assert op.post("/v1/workspaces/w1/arrows", json={"id": "e0", "from": "c0", "to": "a1"}
                   ).status_code == 201
    card = server.client(op.post("/v1/tokens", json={"principal": "card:c0"}).json()["token"])
    d = card.post("/v1/calls", json={"card": "c0", "call": "agents.prompt", "target": "a1",
                                     "args": {"text": "rm -rf /"}}).json()
    assert d["outcome"] == "held", d
    return card, d


def _get(client: httpx.Client, path: str):
    """GET's JSON, asked again while the restart's lost connections fail a request
    closed (503 STORE_FAILED, test_token_check_reconnects)."""
    for _ in range(10):
        try:
            r = client.get(path)
        except httpx.HTTPError:
            r = None
        if r is not None and r.status_code == 200:
            return r.json()
        time.sleep(0.3)  # a failed token check is remembered for a moment (OUTAGE_SECONDS)
    raise AssertionError(f"GET {path} never answered")


@pytest.mark.postgres
def test_a_hold_still_expires_after_the_database_came_back(own_pg: PgServer,
                                                           tmp_path: Path) -> None:
    with psycopg.connect(own_pg.dsn, autocommit=True) as admin:
        admin.execute("create database g15 template template0")
    dsn = with_database(own_pg.dsn, "g15")
    server = start(dsn, tmp_path, "s0")
    try:
        card, d = _held(server, tmp_path)
        made = time.monotonic()
        prompt_id = d["value"]["prompt"]
        # The database goes away for about two seconds (the timer looks every second),
        # then comes back; the server answers again.
        own_pg.stop(remove=False)
        time.sleep(2.5)
        pg_restart(own_pg)
        time.sleep(0.5)
        assert _get(card, f"/v1/prompts/{prompt_id}")["state"] == "held"
        # Nobody touches the server while the hold's deadline (4 s after it was made)
        # passes; the timer expires it within about a second.
        time.sleep(max(0.0, made + 4 + 2.5 - time.monotonic()))
        with psycopg.connect(dsn) as conn:
            rows = [r[0] for r in conn.execute(
                "select outcome from log where call = 'agents.prompt' order by seq")]
        holds = _get(server.client(), "/v1/holds")
        assert rows == ["held", "expired"], rows
        assert holds == [], holds
    finally:
        server.stop()
    assert server.proc.returncode == 0, server.stderr[-2000:]
