"""g15: on a PostgreSQL store a token check that meets a lost connection answers a bare 500.

`arrowgate serve --store postgresql://…` checks a token in the store again once its
cache entry is `CACHE_SECONDS` (2 s) old: `TokenStore.lookup` → `PGTokens.find`
(engine/store/pg/parts.py:503), on a pooled connection. When the database's
backends were ended (a failover, a restart, ``pg_terminate_backend``) the pool
hands out its dead connection; ``psycopg.errors.AdminShutdown`` escapes
`authenticate` (engine/service/context.py:352) through the fast lane
(engine/service/fastlane.py:208) and the app's ``caller``
(engine/service/app.py:57) to uvicorn: ``500 text/plain "Internal Server Error"``,
a traceback on stderr, the connection closed — though the database is up again,
and although the engine's own connection loss is answered as a ``STORE_FAILED``
problem (503). SPEC §10.1: "Errors are application/problem+json (RFC 9457) whose
members include the Decision's code …".
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.pg.servers import prompt_canvas, start


@pytest.mark.postgres
def test_a_call_after_the_backends_were_ended_is_answered(pg_dsn: str,
                                                          tmp_path: Path) -> None:
    server = start(pg_dsn, tmp_path, "s0")
    try:
        op = server.client()
        prompt_canvas(op, tmp_path, 1)
        card = server.client(op.post("/v1/tokens", json={"principal": "card:c0"}).json()["token"])
        call = {"card": "c0", "call": "agents.prompt", "target": "a1", "args": {"text": "hi"}}
        assert card.post("/v1/calls", json=call).json()["outcome"] == "queued"
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            ended = admin.execute(
                "select count(pg_terminate_backend(pid)) from pg_stat_activity"
                " where datname = current_database() and pid <> pg_backend_pid()").fetchone()
        assert ended is not None and ended[0] >= 2  # the engine's and the token pool's
        time.sleep(2.3)  # the card's token is checked in the store again
        answers = []
        for _ in range(4):
            try:
                r = card.post("/v1/calls", json=call)
            except httpx.HTTPError as exc:  # the server closed the connection on us
                answers.append(("dropped", repr(exc)))
                continue
            answers.append((r.status_code, r.headers.get("content-type"), r.text[:120]))
        # The database is up: a lost connection may fail one call closed, as a problem
        # (503 STORE_FAILED); never a bare 500 and a dropped connection.
        for answer in answers:
            assert answer[0] == 200 or (answer[0] == 503 and answer[1] ==
                                        "application/problem+json"), answers
        assert answers[-1][0] == 200, answers
    finally:
        server.stop()
