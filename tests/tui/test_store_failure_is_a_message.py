"""A store that cannot be read is a message on every screen, never the end of the app,
on SQLite and on PostgreSQL alike: each screen opened for the first time after the store
failed reads it in its mount, and that read fails the same way a refresh does.

(Found in round 24: on PostgreSQL an unreachable server raised `StoreFailed`, which the
TUI did not count as a store error, so opening the grants screen ended the app with a
traceback; every screen's first read ran unguarded, SQLite's as well; and the revoke
dialog's answer re-read the grants screen unguarded, so a revoke confirmed while the
server was down ended the app after the refusal was shown.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .world import build, make_app


def _errors(app: Any) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications if n.severity == "error"]


def _corrupt_sqlite(app: Any, path: Path) -> None:
    app.engine.db.execute("pragma wal_checkpoint(TRUNCATE)")
    with open(path, "r+b") as f:
        f.seek(0)
        f.write(b"\xde\xad\xbe\xef" * 4096)


def _cut_off_postgres(dsn: str) -> Callable[[], None]:
    """Refuse new connections to the test's database and end the open ones."""
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    admin_dsn = psycopg.conninfo.make_conninfo(dsn, dbname="postgres")
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("alter database {} allow_connections false")
                      .format(sql.Identifier(name)))
        admin.execute("select pg_terminate_backend(pid) from pg_stat_activity "
                      "where datname = %s and pid <> pg_backend_pid()", (name,))

    def restore() -> None:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("alter database {} allow_connections true")
                          .format(sql.Identifier(name)))
    return restore


@pytest.fixture(params=["sqlite", "postgres"])
async def broken_later(request: pytest.FixtureRequest, tmp_path: Path,
                       tui_clock: VirtualClock) -> Any:
    """(store location, a function that makes the store unreadable under the app)."""
    if request.param == "sqlite":
        path = tmp_path / "tui.db"
        await build(path, tmp_path / "ws", tui_clock)
        yield path, lambda app: _corrupt_sqlite(app, path)
        return
    dsn = request.getfixturevalue("pg_dsn")
    await build(dsn, tmp_path / "ws", tui_clock)
    restores: list[Callable[[], None]] = []
    yield dsn, lambda app: restores.append(_cut_off_postgres(dsn))
    for restore in restores:
        restore()


async def test_every_screen_opened_after_the_store_failed_says_so(
        broken_later: Any, tui_clock: VirtualClock) -> None:
    location, break_store = broken_later
    app = make_app(location, tui_clock, start="canvas")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        # WHEN the store fails under the app, and each other screen opens for the first time
        break_store(app)
        for key in ("4", "5", "3", "2", "1", "4"):
            await pilot.press(key)
            await settle(pilot)
        # THEN the app runs on and says the database cannot be read
        assert app.is_running, app.return_code
        assert app.return_code in (None, 0)
        assert any("Database error" in e for e in _errors(app)), _errors(app)


async def test_a_revoke_confirmed_while_the_store_is_down_is_a_message(
        broken_later: Any, tui_clock: VirtualClock) -> None:
    location, break_store = broken_later
    app = make_app(location, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        for table_id, key in (("#packages", "acme.standup"), ("#permissions", "agents.prompt")):
            table = app.screen.query_one(table_id, DataTable)
            table.focus()
            table.move_cursor(row=table.get_row_index(key))
            await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        # WHEN the store fails while the revoke dialog is open, and the person confirms
        break_store(app)
        await pilot.press("y")
        await settle(pilot)
        # THEN the app runs on
        assert app.is_running, app.return_code
        assert app.return_code in (None, 0)
