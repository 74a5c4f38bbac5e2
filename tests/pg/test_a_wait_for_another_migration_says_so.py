"""An engine opening a PostgreSQL store that another process is migrating says that it
waits, for whom and for how long at most, as the wait begins (README "PostgreSQL").

The wait is for the store's migrations lock, as long as the migration takes, up to
`MIGRATION_S` (five minutes): an `arrowgate serve` started beside a long upgrade sat
there saying nothing, as a hung process does, and a user would kill it. What holds the
lock is named as a session is named anywhere (its process id and application name, never
its statement), so the user can tell a migration from a session left holding it.
"""

from __future__ import annotations

import logging
import threading
import time

import psycopg
import pytest

from engine.store.pg.locks import NAMESPACE, Lock
from tests.conftest import open_store


@pytest.mark.postgres
def test_an_open_waiting_for_another_migration_says_so_naming_it(
        pg_dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    told: list[BaseException | str] = []

    def opening() -> None:
        try:
            open_store(pg_dsn).close()
            told.append("opened")
        except BaseException as exc:  # told by the assertions below
            told.append(exc)

    caplog.set_level(logging.WARNING)
    with psycopg.connect(pg_dsn, application_name="arrowgate upgrade elsewhere",
                         autocommit=True) as other:
        # Another process migrating: it holds the migrations lock.
        other.execute("select pg_advisory_lock(%s, %s)", [NAMESPACE, int(Lock.MIGRATIONS)])
        pid = other.info.backend_pid
        opener = threading.Thread(target=opening, daemon=True)
        opener.start()
        deadline = time.monotonic() + 10
        while not any("migrat" in r.getMessage() for r in caplog.records) and (
                time.monotonic() < deadline):
            time.sleep(0.02)
        waiting = [r.getMessage() for r in caplog.records if "migrat" in r.getMessage()]
        assert told == [], told  # still waiting, as it should
        assert waiting, "nothing said the open waits for another process's migration"
        assert "arrowgate upgrade elsewhere" in waiting[0] and str(pid) in waiting[0], waiting
        assert "300 s" in waiting[0], waiting
        other.execute("select pg_advisory_unlock(%s, %s)", [NAMESPACE, int(Lock.MIGRATIONS)])
        opener.join(30)
    assert told == ["opened"], told
