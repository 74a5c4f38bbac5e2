"""``GET /v1/health?ready=true`` on a SQLite store: ready, with its store ``ok``; a
``ready`` that is no yes or no is refused as bad input; plain health unchanged (the
PostgreSQL store away: `tests.pg.test_health_asked_ready_tells_a_store_away`)."""

from __future__ import annotations

from engine.service.context import API_VERSION

from .conftest import Running


def test_health_asked_ready_says_the_sqlite_store_answers(unix_server: Running) -> None:
    live = {"status": "ok", "version": API_VERSION}
    with unix_server.client(None) as anon:
        assert anon.get("/v1/health").json() == live
        for yes in ("true", "1"):
            ready = anon.get("/v1/health", params={"ready": yes})
            assert (ready.status_code, ready.json()) == (200, {**live, "store": "ok"})
        assert anon.get("/v1/health", params={"ready": "false"}).json() == live
        odd = anon.get("/v1/health", params={"ready": "maybe"})
        assert odd.status_code == 400, odd.text
        assert "ready" in odd.json()["detail"]
