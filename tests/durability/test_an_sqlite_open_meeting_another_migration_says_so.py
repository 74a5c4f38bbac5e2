"""An engine opening a SQLite store whose migration another process holds the write lock
for says that it waits, for whom and how long at most, as the wait begins; and if the
lock is not let go within the busy timeout, the open fails closed with reason ``locked``,
naming the holder and saying the store is as it was (nothing migrated), as PostgreSQL's
open does (tests/pg/test_a_wait_for_another_migration_says_so.py,
tests/pg/test_opening_a_store_a_session_holds_locked_names_it.py).

Found in round 32: an older store being upgraded by one process (`arrowgate upgrade`, a
server starting) and opened by another (the TUI) waited the busy timeout in silence and
failed with "cannot open the store …: database is locked" and no reason (exit 1, as a
finding about the store, where a lock held elsewhere is no such thing).
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from engine import Engine, World
from engine.core.errors import StoreFailed
from engine.store import migrations as chain
from engine.store.database import open_database


def _older_store(path: Path) -> None:
    db = open_database(path)
    chain.migrations.apply(db, stop_before=chain.migrations.names[-1])
    db.close()


def test_an_open_meeting_another_migration_says_so_and_fails_closed_naming_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "app.db"
    _older_store(path)
    caplog.set_level(logging.WARNING)
    # GIVEN another process migrating it: it holds the write lock
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        # WHEN an engine opens it, and the lock is not let go within its busy timeout
        with pytest.raises(StoreFailed) as raised:
            Engine.open(path, busy_timeout=0.3, world=World(net=None, fs=None)).close()
    finally:
        other.execute("ROLLBACK")
        other.close()
    # THEN it said it waits, as the wait began, naming the bound
    waiting = [r.getMessage() for r in caplog.records if "migrat" in r.getMessage()]
    assert waiting, "nothing said the open waits for another process holding the store"
    assert str(path) in waiting[0] and "0.3 s" in waiting[0], waiting
    # AND the open failed closed, reason locked, saying the store is as it was
    assert raised.value.reason == "locked", str(raised.value)
    assert "as it was" in str(raised.value), str(raised.value)
    # AND once the lock is let go it opens, migrated
    Engine.open(path, world=World(net=None, fs=None)).close()
    db = open_database(path)
    try:
        assert chain.migrations.behind(db) == []
    finally:
        db.close()
