"""Rolling-window admission on PostgreSQL: the engine's rule, exact across processes."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from engine.core.limits import RollingWindow
from engine.store.pg.admission import admit
from engine.store.pg.schema import migrate
from tests.pg.workers import admit_many, run_all


@pytest.fixture
def conn(pg_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection to a migrated database."""
    with psycopg.connect(pg_dsn) as conn:
        migrate(conn)
        yield conn


def _admit(conn: psycopg.Connection[Any], t: float, *, limit: int = 3, period: float = 10.0,
           card: str = "c1", key: str = "prompt") -> Any:
    with conn.transaction():
        return admit(conn, card, key, limit=limit, period=period, now=lambda: t)


def _events(conn: psycopg.Connection[Any]) -> list[tuple[str, str, float]]:
    rows = conn.execute("select card, key, t from rate_events order by id").fetchall()
    conn.commit()
    return [(str(c), str(k), float(t)) for c, k, t in rows]


def test_admits_up_to_the_limit_then_says_when(conn: psycopg.Connection[Any]) -> None:
    assert [_admit(conn, t).admitted for t in (100.0, 101.0, 102.0)] == [True] * 3
    refused = _admit(conn, 105.0)
    assert (refused.admitted, refused.counted, refused.retry_after) == (False, 3, 5.0)
    # At 110 the event of 100 has left the half-open window (100, 110].
    assert _admit(conn, 110.0).admitted
    assert not _admit(conn, 110.5).admitted
    # Other cards and keys have windows of their own.
    assert _admit(conn, 110.5, card="c2").admitted
    assert _admit(conn, 110.5, key="fetch").admitted
    assert len(_events(conn)) == 6


def test_decisions_match_the_engines_own_window(conn: psycopg.Connection[Any]) -> None:
    rng = random.Random(20)
    window = RollingWindow(limit=4, period=7.5)
    t = 1000.0
    for _ in range(150):
        t += rng.choice([0.0, 0.1, 0.5, 1.0, 2.5, 7.5, rng.random() * 3])
        expected = window.retry_after(t)
        got = _admit(conn, t, limit=4, period=7.5)
        assert got.retry_after == expected, t
        assert got.admitted is (expected is None)
        if got.admitted:
            window.count(t)


def test_events_stamped_ahead_of_our_clock_count(conn: psycopg.Connection[Any]) -> None:
    # Another engine's clock runs ahead: its events still fill our window.
    for _ in range(3):
        assert _admit(conn, 200.0).admitted
    assert not _admit(conn, 195.0).admitted


def test_a_rolled_back_admission_is_never_counted(conn: psycopg.Connection[Any]) -> None:
    class QueueFull(Exception):
        pass

    for _ in range(3):
        with pytest.raises(QueueFull), conn.transaction():
            assert admit(conn, "c1", "prompt", limit=1, period=10.0, now=lambda: 50.0).admitted
            raise QueueFull  # a later step refuses the call
    assert _events(conn) == []
    assert _admit(conn, 50.0, limit=1).admitted


def test_the_time_is_read_only_once_the_lock_is_held(pg_dsn: str,
                                                     conn: psycopg.Connection[Any]) -> None:
    conn.commit()
    read_at: list[str] = []
    holder_committed = threading.Event()

    def clock() -> float:
        read_at.append("after commit" if holder_committed.is_set() else "while held")
        return 10.0

    def second() -> None:
        with psycopg.connect(pg_dsn) as other, other.transaction():
            admit(other, "c1", "prompt", limit=1, period=100.0, now=clock)

    with conn.transaction():
        assert admit(conn, "c1", "prompt", limit=1, period=100.0, now=lambda: 10.0).admitted
        waiter = threading.Thread(target=second)
        waiter.start()
        waiter.join(timeout=0.5)
        assert waiter.is_alive()  # waiting for our lock, its clock not yet read
        holder_committed.set()
    waiter.join(timeout=10)
    assert read_at == ["after commit"]
    assert len(_events(conn)) == 1  # and it saw our event: refused


@pytest.mark.parametrize(("args", "match"), [
    ({"limit": 0}, "limit"), ({"limit": 2.5}, "limit"), ({"limit": True}, "limit"),
    ({"period": 0.0}, "period"), ({"period": float("inf")}, "period"),
    ({"period": float("nan")}, "period"), ({"card": ""}, "card"),
])
def test_bad_arguments_are_refused(conn: psycopg.Connection[Any], args: dict[str, Any],
                                   match: str) -> None:
    call: dict[str, Any] = {"card": "c1", "key": "prompt", "limit": 3, "period": 10.0, **args}
    with pytest.raises(ValueError, match=match), conn.transaction():
        admit(conn, call.pop("card"), call.pop("key"), now=lambda: 1.0, **call)
    assert _events(conn) == []


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "1.0", None])
def test_a_clock_that_gives_no_finite_time_changes_nothing(conn: psycopg.Connection[Any],
                                                           bad: Any) -> None:
    with pytest.raises(ValueError, match="finite time"), conn.transaction():
        admit(conn, "c1", "prompt", limit=3, period=10.0, now=lambda: bad)
    assert _events(conn) == []


def test_outside_a_transaction_is_refused(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        migrate(conn)
        with pytest.raises(ValueError, match="inside the caller's transaction"):
            admit(conn, "c1", "prompt", limit=3, period=10.0, now=lambda: 1.0)
        assert conn.execute("select count(*) from rate_events").fetchone() == (0,)


def test_a_snapshot_older_than_the_lock_is_refused(conn: psycopg.Connection[Any]) -> None:
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    with pytest.raises(ValueError, match="READ COMMITTED"), conn.transaction():
        admit(conn, "c1", "prompt", limit=3, period=10.0, now=lambda: 1.0)
    conn.isolation_level = None
    assert _events(conn) == []


def test_four_processes_ten_attempts_each_admit_exactly_the_limit(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        migrate(conn)
    # 40 attempts at once, all inside one hour-long window with room for 6.
    admitted = run_all(admit_many, (pg_dsn, 10, 6, 3600.0), processes=4)
    assert sum(admitted) == 6, admitted
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("select count(*) from rate_events").fetchone() == (6,)
