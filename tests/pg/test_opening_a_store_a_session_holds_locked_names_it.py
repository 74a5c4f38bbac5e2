"""Opening a PostgreSQL store (``arrowgate serve --store``, any engine: each applies the
migrations the store lacks at open) while another session holds a table it needs locked
gives up after a bound and names that session; it had waited MIGRATION_S, five minutes,
saying nothing. Another process's migration is still waited for that long (its own lock,
apart from the tables: a migration may rightly take minutes).

Rule: SPEC §10 — a session that holds a lock and walks away fails the engine closed
naming it (README "PostgreSQL"), never hangs it; an open is no exception.
"""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

import engine.store.pg.store as pg_store
from engine.core.errors import StoreFailed
from tests.conftest import open_store


@pytest.mark.postgres
def test_an_open_waiting_on_a_table_a_session_holds_gives_up_naming_it(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_store(pg_dsn).close()  # the store, made
    monkeypatch.setattr(pg_store, "MIGRATION_TABLE_LOCK_S", 0.5, raising=False)
    told: list[BaseException | str] = []

    def opening() -> None:
        try:
            open_store(pg_dsn).close()
            told.append("opened")
        except BaseException as exc:  # told by the assertions below
            told.append(exc)

    with psycopg.connect(pg_dsn, application_name="a psql shell") as shell:
        shell.execute("lock table schema_migrations in access exclusive mode")
        opener = threading.Thread(target=opening, daemon=True)
        opener.start()
        opener.join(30)
        assert not opener.is_alive(), "the open still waited for the lock after 30 s"
    assert len(told) == 1 and isinstance(told[0], StoreFailed), told
    failed = told[0]
    assert failed.reason == "locked"
    assert "a psql shell" in str(failed) and "schema_migrations" in str(failed), str(failed)
    assert "as it was" in str(failed)
    open_store(pg_dsn).close()  # the shell gone, it opens
