"""``GET /v1/health?ready=true`` on a SQLite store: ready, with its store ``ok``; a
``ready`` that is no yes or no is refused as bad input; plain health unchanged (the
PostgreSQL store away: `tests.pg.test_health_asked_ready_tells_a_store_away`)."""

from __future__ import annotations

import subprocess
import sys

from engine.service.context import API_VERSION
from engine.store.ahead import arrowgate_version

from .conftest import Running


def test_health_asked_ready_says_the_sqlite_store_answers(unix_server: Running) -> None:
    live = {"status": "ok", "version": API_VERSION,
                "arrowgate_version": arrowgate_version()}
    with unix_server.client(None) as anon:
        assert anon.get("/v1/health").json() == live
        for yes in ("true", "1"):
            ready = anon.get("/v1/health", params={"ready": yes})
            assert (ready.status_code, ready.json()) == (200, {**live, "store": "ok"})
        assert anon.get("/v1/health", params={"ready": "false"}).json() == live
        odd = anon.get("/v1/health", params={"ready": "maybe"})
        assert odd.status_code == 400, odd.text
        assert "ready" in odd.json()["detail"]


def test_health_names_the_build_beside_the_api(server: Running) -> None:
    """``version`` is the API's; ``arrowgate_version`` the build's, what ``arrowgate
    --version`` prints (round 35: health said only 1.0.0, the API's, and a client could
    not tell which arrowgate it talked to), through the fast lane and FastAPI's route."""
    printed = subprocess.run([sys.executable, "-m", "engine.app.cli", "--version"],
                             capture_output=True, text=True, check=True).stdout.split()
    with server.client(None) as anon:
        for params in ({}, {"ready": "true"}):
            said = anon.get("/v1/health", params=params).json()
            assert (said["version"], said["arrowgate_version"]) == (API_VERSION, printed[1])
            assert printed[1] != "unknown"  # an installed arrowgate names its build
