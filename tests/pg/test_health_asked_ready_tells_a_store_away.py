"""``GET /v1/health?ready=true`` says whether the service's store answers now; plain
``GET /v1/health`` stays the cheap liveness check it was, the same answer whatever the
store does (SPEC §10.1 names the route; the README's decision says the rest).

Found in round 30: health answered ``ok`` while PostgreSQL was away and every store
route answered 503, and a canvas app or a load balancer had no way to ask whether the
server could do anything. A real ``arrowgate serve`` (its start, a few seconds on a
busy machine) and a frozen server's round trip (3 s) running out: about 8 s.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from engine.service.context import API_VERSION
from engine.store.ahead import arrowgate_version
from tests.pg.partition import Partition
from tests.pg.servers import start
from tests.shortdirs import short_dir


@pytest.mark.postgres
def test_health_asked_ready_says_whether_the_postgresql_store_answers(
        pg_dsn: str, tmp_path: Path) -> None:
    partition = Partition(pg_dsn, short_dir("agq"))
    server = start(partition.dsn, tmp_path, "a")
    try:
        anon = server.client("")
        del anon.headers["Authorization"]  # health needs no token, ready or not
        live = {"status": "ok", "version": API_VERSION,
                "arrowgate_version": arrowgate_version()}
        assert anon.get("/v1/health").json() == live
        ready = anon.get("/v1/health", params={"ready": "true"})
        assert (ready.status_code, ready.json()) == (200, {**live, "store": "ok"})
        partition.freeze()  # the database stops answering
        for _ in range(30):  # the last look's answer is kept a second
            away = anon.get("/v1/health", params={"ready": "true"})
            if away.status_code != 200:
                break
            time.sleep(0.1)
        assert away.status_code == 503, away.text
        assert away.headers["content-type"] == "application/problem+json"
        assert away.json()["code"] == "STORE_FAILED"
        assert "PostgreSQL" in away.json()["detail"] or "answer" in away.json()["detail"]
        live_now = anon.get("/v1/health")  # liveness: the process answers, as before
        assert (live_now.status_code, live_now.json()) == (200, live)
        partition.thaw()
        for _ in range(100):  # ready again once the store answers, without a restart
            back = anon.get("/v1/health", params={"ready": "true"})
            if back.status_code == 200:
                break
            time.sleep(0.1)
        assert (back.status_code, back.json()) == (200, {**live, "store": "ok"})
    finally:
        server.stop(sig=signal.SIGKILL)
        partition.close()
