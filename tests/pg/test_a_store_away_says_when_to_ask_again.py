"""A PostgreSQL store away answers 503 with ``Retry-After``: when its reconnection's
answer is known (`engine.store.pg.parts`).

Once a connection attempt went unanswered, every request is told at once that the
store is away while an attempt off the caller's thread connects again; that attempt
has its answer within the connect timeout of its start, so the 503 says how long
that is, in the problem (``retry_after``) and in the header clients read (RFC 9110
§10.2.3). Found in round 34's audit of the service's 429s and 503s, when it said no
time. A frozen server's round trip (3 s) and a connect timing out: about 10 s.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.pg.partition import Partition
from tests.pg.servers import start
from tests.shortdirs import short_dir


@pytest.mark.postgres
def test_a_store_away_says_when_it_is_asked_again(pg_dsn: str, tmp_path: Path) -> None:
    partition = Partition(pg_dsn, short_dir("agq"))
    server = start(partition.dsn, tmp_path, "a")
    try:
        op = server.client()
        assert op.post("/v1/workspaces", json={"id": "w1", "folder": str(tmp_path)}
                       ).status_code == 201
        partition.freeze()  # the database stops answering
        n = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            n += 1
            r = op.post("/v1/workspaces/w1/nodes", json={"id": f"n{n}", "type": "note"})
            assert r.status_code == 503, r.text
            if "connecting again meanwhile" in r.json()["detail"]:
                break
        else:
            raise AssertionError(f"never told the store is away: {r.text}")
        body = r.json()
        assert body["code"] == "STORE_FAILED"
        # The server's connect timeout is 10 s: the attempt's answer is known by then.
        assert 0 <= body["retry_after"] <= 10, body
        assert 1 <= int(r.headers["Retry-After"]) <= 10, r.headers
    finally:
        server.stop(sig=signal.SIGKILL)
        partition.close()
