"""g15: a database that stops answering (a partition, a stuck server) hangs the server.

The PostgreSQL store runs its statements synchronously on the service's event
loop (`Link`, engine/store/pg/parts.py:80, and `PGTokens`, parts.py:482), with
no ``statement_timeout``, no ``tcp_user_timeout``/keepalive settings and no
deadline of its own (`Link.connect` sets only ``synchronous_commit`` and the
isolation level; the only timeout is ``lock_timeout`` while waiting for the
write lock). When the server's backends stop answering — here they are stopped
with SIGSTOP, as a network partition or a frozen database host would leave them —
the first statement blocks the event loop for good: the call never gets an
answer, and neither does anyone else, ``GET /v1/health`` included, while a
second server on the same database (its own backends fine) goes on.

Spec silent on timing, but §10 "Storage" promises the PostgreSQL engine for
"several app processes or machines", and the store's own contract is that "a
lost connection fails the operation closed (StoreFailed)"; a careful user expects
a call to be refused (503 STORE_FAILED) within a bounded time, and the health
route to answer, rather than the whole service freezing until the kernel gives
up on the connection (hours, over TCP).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.pg.servers import prompt_canvas, start


@pytest.mark.postgres
def test_a_server_whose_database_stopped_answering_still_answers(pg_dsn: str,
                                                                 tmp_path: Path) -> None:
    a = start(pg_dsn, tmp_path, "a")
    stopped: list[int] = []
    try:
        prompt_canvas(a.client(), tmp_path, 1)
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            pids = [int(r[0]) for r in admin.execute(
                "select pid from pg_stat_activity where datname = current_database()"
                " and pid <> pg_backend_pid()")]
        b = start(pg_dsn, tmp_path, "b")
        try:
            for pid in pids:  # server a's backends stop answering
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
            call = {"card": "c0", "call": "agents.prompt", "target": "a1",
                    "args": {"text": "hi"}}
            answered: list[object] = []

            def call_a() -> None:
                try:
                    answered.append(a.client(timeout=12).post("/v1/calls", json=call)
                                    .status_code)
                except httpx.HTTPError as exc:
                    answered.append(repr(exc))

            caller = threading.Thread(target=call_a)
            caller.start()
            time.sleep(0.5)
            # The other server, on its own connections, is not held up.
            assert b.client(timeout=12).post("/v1/calls", json=call).status_code == 200
            with httpx.Client(transport=httpx.HTTPTransport(uds=a.address),
                              base_url="http://ag", timeout=5) as anon:
                try:
                    health: object = anon.get("/v1/health").status_code
                except httpx.HTTPError as exc:
                    health = repr(exc)
            caller.join(30)
            assert health == 200, f"server a's GET /v1/health: {health}"
            assert answered and isinstance(answered[0], int), \
                f"server a's call was not answered in 12 s: {answered}"
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)
            b.stop(sig=signal.SIGKILL)
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        a.stop(sig=signal.SIGKILL)
