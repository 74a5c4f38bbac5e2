"""A token check after the database's backends were ended is answered: 200, or a 503 problem.

Rule: the token pool hands out no connection the server ended
(``ConnectionPool.check_connection`` checks it first), and any store error in a
token check (`PGTokens`, `TokenStore.lookup`, `authenticate`) is `StoreFailed`,
answered as a 503 STORE_FAILED ``application/problem+json`` (SPEC §10.1) —
never a bare 500 nor a dropped connection.

(Found by a helper: after ``pg_terminate_backend`` the pool handed out its dead
connection; ``AdminShutdown`` escaped to uvicorn: 500 text/plain, connection closed.)
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.pg.servers import prompt_canvas, start


@pytest.mark.postgres
def test_a_token_check_on_an_ended_connection_is_answered(pg_dsn: str,
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
