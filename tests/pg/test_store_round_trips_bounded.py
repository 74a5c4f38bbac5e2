"""Every store round trip is bounded: a database that stops answering fails calls closed.

Rule: the PostgreSQL store's connections (`engine.store.pg.parts.BoundedConnection`,
the engine's `Link` and the token pool) give psycopg's socket wait a deadline
(`ROUND_TRIP_S`, 3 s; `TOKEN_ROUND_TRIP_S`, 1.5 s; the wait for the write lock
``lock_timeout`` + 3 s): a server that stops answering (backend SIGSTOPped, a frozen
host, a partition) closes the connection and fails the operation closed (503
STORE_FAILED), so the service — ``GET /v1/health`` included — answers again within
seconds, and reconnects. This bounds Unix-socket connections too, without threads;
TCP connections also get libpq's keepalives and ``tcp_user_timeout`` unless the URL
sets them (`TCP_BOUNDS`, `bounded_dsn`).

(Found by a helper: the first statement on a stopped backend blocked the event loop
for good — no answer to the call nor to health.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from engine.core.errors import StoreFailed
from engine.store.pg.parts import TCP_BOUNDS, Link, NoAnswer, bounded_dsn
from tests.pg.partition import Partition
from tests.pg.servers import prompt_canvas, start
from tests.shortdirs import short_dir


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
            _resume(stopped)
            b.stop(sig=signal.SIGKILL)
    finally:
        _resume(stopped)
        a.stop(sig=signal.SIGKILL)


def _resume(stopped: list[int]) -> None:
    """SIGCONT the stopped backends, once each (one may since have ended)."""
    while stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stopped.pop(), signal.SIGCONT)


@pytest.mark.postgres
def test_a_round_trip_without_an_answer_ends_at_its_deadline(pg_dsn: str) -> None:
    conn = Link(pg_dsn).connect()
    conn.deadline = 0.3
    t0 = time.monotonic()
    with pytest.raises(NoAnswer, match="did not answer within 0.3 s"):
        conn.execute("select pg_sleep(60)")
    # Ended by its deadline, not by the answer: a minute's sleep tells the two apart
    # however long a loaded machine stalls this process (the database is dropped
    # with the sleeping session, forced).
    assert time.monotonic() - t0 < 30
    assert conn.closed  # the server may still answer: never reused
    with Link(pg_dsn).connect() as other:  # the store reconnects
        assert other.execute("select 1").fetchone() == (1,)


def test_tcp_bounds_are_added_unless_the_url_sets_them() -> None:
    given = psycopg.conninfo.conninfo_to_dict(bounded_dsn("postgresql://h/db"))
    assert {k: given[k] for k in TCP_BOUNDS} == TCP_BOUNDS
    own = psycopg.conninfo.conninfo_to_dict(
        bounded_dsn("postgresql://h/db?keepalives_idle=60&tcp_user_timeout=0"))
    assert own["keepalives_idle"] == "60" and own["tcp_user_timeout"] == "0"
    assert own["keepalives_count"] == TCP_BOUNDS["keepalives_count"]


@pytest.mark.postgres
def test_a_server_that_stopped_answering_is_connected_to_again_off_the_callers_thread(
        pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole server frozen (SIGSTOP, a partition): new connections hang too. One
    reconnection is tried on the caller's thread (the service's event loop); after it
    found no answer, every use fails closed at once, saying why, while the next
    attempts wait in a thread of their own, and the first that gets through is the
    link's connection once the server answers again. (Found SIGSTOPping the server
    under two ``arrowgate serve``: each use of the lost connection connected again on
    the loop, 10 s each, so health and every request waited 12–19 s for a 503, for as
    long as the server was away.) About 2 s: libpq's shortest connect timeout."""
    partition = Partition(pg_dsn, short_dir("agq"))
    connecting: list[int] = []
    connect = Link.connect

    def counted(self: Link, *args: Any, **kwargs: Any) -> Any:
        connecting.append(threading.get_ident())
        return connect(self, *args, **kwargs)

    monkeypatch.setattr(Link, "connect", counted)
    link = Link(partition.dsn, connect_timeout=2)
    try:
        link.conn.deadline = 0.3
        assert link.conn.execute("select 1").fetchone() == (1,)
        partition.freeze()
        with pytest.raises(NoAnswer):
            link.conn.execute("select 1")
        link.abandon()
        here = threading.get_ident()
        with pytest.raises(StoreFailed, match="cannot reach the PostgreSQL store"):
            link.conn.execute("select 1")  # one try here, bounded
        assert connecting.count(here) == 2
        for _ in range(3):
            with pytest.raises(StoreFailed, match="did not answer") as told:
                link.conn.execute("select 1")
            assert told.value.reason == "connection"
        assert connecting.count(here) == 2, "a caller waited on a server that is away"
        partition.thaw()
        for _ in range(100):  # the attempt in its thread gets through
            try:
                assert link.conn.execute("select 1").fetchone() == (1,)
                break
            except StoreFailed:
                time.sleep(0.05)
        else:
            raise AssertionError("the link did not connect again once the server answered")
        assert connecting.count(here) == 2
    finally:
        link.close()
        partition.close()
