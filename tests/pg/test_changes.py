"""The change feed: numbers in commit order, LISTEN/NOTIFY, and catch-up after a drop."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from engine.core.errors import StoreFailed
from engine.store.pg.changes import (
    CHANNEL,
    changes_after,
    follow_changes,
    latest_change,
    record_change,
)
from engine.store.pg.schema import migrate


@pytest.fixture
def conn(pg_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """An autocommit connection to a migrated database."""
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        migrate(conn)
        yield conn


def _change(conn: psycopg.Connection[Any], kind: str = "revoke") -> int:
    with conn.transaction():
        return record_change(conn, kind, {"package": "acme.notes"}, t=1000.0)


class Follower:
    """Runs `follow_changes` in a thread, collecting what it yields."""

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], after: int = 0,
                 **kwargs: Any) -> None:
        self.stop: threading.Event = kwargs.pop("stop", None) or threading.Event()
        self.seen: queue.Queue[int] = queue.Queue()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(connect, after, kwargs))
        self.thread.start()

    def _run(self, connect: Callable[[], psycopg.Connection[Any]], after: int,
             kwargs: dict[str, Any]) -> None:
        try:
            for seq in follow_changes(connect, after, stop=self.stop, **kwargs):
                self.seen.put(seq)
        except BaseException as exc:
            self.error = exc

    def take(self, count: int, timeout: float = 10.0) -> list[int]:
        """The next ``count`` numbers yielded (fails after ``timeout`` seconds)."""
        return [self.seen.get(timeout=timeout) for _ in range(count)]

    def close(self, dsn: str) -> None:
        self.stop.set()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"notify {CHANNEL}, '0'")  # wake it now, not after poll
        self.thread.join(timeout=10)
        assert not self.thread.is_alive()


def test_numbers_follow_commit_order_with_no_gaps(pg_dsn: str,
                                                 conn: psycopg.Connection[Any]) -> None:
    assert latest_change(conn) == 0
    assert [_change(conn) for _ in range(3)] == [1, 2, 3]
    with pytest.raises(RuntimeError), conn.transaction():
        record_change(conn, "grant", {}, t=1.0)
        raise RuntimeError("rolled back")
    assert _change(conn) == 4  # the rolled-back change took no number
    assert changes_after(conn, 2) == [3, 4]
    assert latest_change(conn) == 4
    assert conn.execute("select kind, subject from changes where seq = 4").fetchone() == (
        "revoke", '{"package": "acme.notes"}')


def test_a_second_writer_numbers_after_the_first_commits(pg_dsn: str,
                                                         conn: psycopg.Connection[Any]) -> None:
    numbers: list[int] = []

    def second() -> None:
        with psycopg.connect(pg_dsn, autocommit=True) as other:
            numbers.append(_change(other, "grant"))

    with conn.transaction():
        first = record_change(conn, "revoke", {}, t=1.0)
        waiter = threading.Thread(target=second)
        waiter.start()
        waiter.join(timeout=0.5)
        assert waiter.is_alive()  # it may not take a number before we commit
    waiter.join(timeout=10)
    assert (first, numbers) == (1, [2])


def test_bad_changes_are_refused_and_record_nothing(conn: psycopg.Connection[Any]) -> None:
    with pytest.raises(ValueError, match="inside the caller's transaction"):
        record_change(conn, "revoke", {}, t=1.0)
    with pytest.raises(ValueError, match="kind"), conn.transaction():
        record_change(conn, "", {}, t=1.0)
    with pytest.raises(TypeError), conn.transaction():
        record_change(conn, "revoke", {"x": object()}, t=1.0)
    assert latest_change(conn) == 0


def test_a_follower_sees_each_change_once_in_order(pg_dsn: str,
                                                   conn: psycopg.Connection[Any]) -> None:
    _change(conn)
    follower = Follower(lambda: psycopg.connect(pg_dsn), after=0, poll=5.0)
    try:
        assert follower.take(1) == [1]  # the catch-up read at start
        for _ in range(3):
            _change(conn)
        # poll is 5 s: these arrive by notification.
        assert follower.take(3, timeout=4.0) == [2, 3, 4]
    finally:
        follower.close(pg_dsn)
    assert follower.seen.empty() and follower.error is None


def test_a_change_whose_notification_was_lost_is_still_seen(
        pg_dsn: str, conn: psycopg.Connection[Any]) -> None:
    follower = Follower(lambda: psycopg.connect(pg_dsn), poll=5.0)
    try:
        _change(conn)
        assert follower.take(1) == [1]  # it is listening now
        # Written without NOTIFY, as if its notification never arrived …
        conn.execute("insert into changes (seq, t, kind, subject) values (2, 0, 'grant', '{}')")
        time.sleep(0.3)
        assert follower.seen.empty()
        # … the next notification's catch-up read brings it along.
        _change(conn)
        assert follower.take(2, timeout=4.0) == [2, 3]
    finally:
        follower.close(pg_dsn)


def test_the_poll_catches_up_with_no_notification_at_all(
        pg_dsn: str, conn: psycopg.Connection[Any]) -> None:
    follower = Follower(lambda: psycopg.connect(pg_dsn), poll=0.2)
    try:
        conn.execute("insert into changes (seq, t, kind, subject) values (1, 0, 'grant', '{}')")
        assert follower.take(1, timeout=5.0) == [1]
    finally:
        follower.close(pg_dsn)


def test_after_a_killed_connection_nothing_is_missed(pg_dsn: str,
                                                     conn: psycopg.Connection[Any]) -> None:
    connects: list[int] = []
    reconnecting = threading.Event()
    may_reconnect = threading.Event()

    def connect() -> psycopg.Connection[Any]:
        if connects:  # a reconnection: hold it until the test has written meanwhile
            reconnecting.set()
            assert may_reconnect.wait(10)
        new = psycopg.connect(pg_dsn)
        connects.append(new.info.backend_pid)
        return new

    follower = Follower(connect, poll=5.0)
    try:
        for _ in range(3):
            _change(conn)
        assert follower.take(3) == [1, 2, 3]
        killed = conn.execute("select pg_terminate_backend(%s)", [connects[0]]).fetchone()
        assert killed == (True,)
        assert reconnecting.wait(10)  # the follower saw its connection go
        # Committed while no follower listens: their notifications are lost.
        for _ in range(3):
            _change(conn)
        may_reconnect.set()
        assert follower.take(3, timeout=5.0) == [4, 5, 6]
        _change(conn)
        assert follower.take(1, timeout=4.0) == [7]  # listening again
    finally:
        may_reconnect.set()
        follower.close(pg_dsn)
    assert len(connects) == 2 and follower.error is None and follower.seen.empty()
    listeners = conn.execute("select count(*) from pg_stat_activity where query = %s",
                             [f"listen {CHANNEL}"]).fetchone()
    assert listeners == (0,)  # closing the generator closed its connection


def test_a_follower_that_cannot_reconnect_gives_up(pg_dsn: str) -> None:
    attempts: list[float] = []

    def connect() -> psycopg.Connection[Any]:
        attempts.append(time.monotonic())
        return psycopg.connect(pg_dsn + "_no_such_database", connect_timeout=2)

    follower = Follower(connect, retry=0.05, give_up=0.3)
    follower.thread.join(timeout=10)
    assert isinstance(follower.error, StoreFailed)
    assert follower.error.reason == "change-feed-lost"
    assert len(attempts) >= 3 and attempts[-1] - attempts[0] >= 0.25


@pytest.mark.parametrize(("arg", "value"), [("poll", 0), ("retry", -1.0), ("give_up", 0),
                                            ("after", -1), ("after", 1.5)])
def test_bad_arguments_are_refused_before_connecting(arg: str, value: Any) -> None:
    with pytest.raises(ValueError, match=arg):
        arguments: dict[str, Any] = {arg: value}
        next(follow_changes(lambda: pytest.fail("no connection expected"), **arguments))


class _WaitsRecorded(threading.Event):
    """A stop event that records how long each retry waits."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        if timeout is not None:
            self.waits.append(timeout)
        return super().wait(timeout)


class _MinutesPass:
    """What the change feed reads as its clock: ten seconds pass at each look, so a
    server away for minutes takes a moment of the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 10.0
        return self.now

    def sleep(self, seconds: float) -> None:
        pass


def test_the_feed_keeps_reconnecting_for_as_long_as_it_is_followed(
        pg_dsn: str, conn: psycopg.Connection[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine's feed follows for as long as the engine runs: a server away for more
    than half a minute (a restart that took long, a failover) is waited out, each wait
    longer than the last up to a bound, and the feed catches up once it answers. It had
    given up after 30 s and never listened again (only the polling noticed changes)."""
    from engine.store.pg import changes

    monkeypatch.setattr(changes, "time", _MinutesPass())
    failures = 8  # over a minute of the feed's clock
    attempts: list[int] = []

    def connect() -> psycopg.Connection[Any]:
        attempts.append(1)
        if len(attempts) <= failures:
            raise psycopg.OperationalError("connection refused (the server is away)")
        return psycopg.connect(pg_dsn)

    stop = _WaitsRecorded()
    _change(conn)
    follower = Follower(connect, retry=0.001, stop=stop)
    try:
        assert follower.take(1, timeout=10.0) == [1]
        _change(conn)
        assert follower.take(1, timeout=10.0) == [2]  # listening again
    finally:
        follower.close(pg_dsn)
    assert follower.error is None
    assert len(attempts) == failures + 1
    # Backing off: each wait at least the last, the first the retry given.
    assert stop.waits[0] == 0.001
    assert stop.waits == sorted(stop.waits) and stop.waits[-1] > stop.waits[0]
    assert max(stop.waits) <= changes.RETRY_MAX_S
