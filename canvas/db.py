"""Opening the one SQLite file of an app, and write transactions on it.

Every write goes through `write_transaction`, which opens ``BEGIN IMMEDIATE``:
sqlite-utils' ``db.atomic()`` opens a plain ``BEGIN``, which takes the write
lock only at the first write and then fails with "database is locked" when
another writer got there first. ``synchronous=FULL`` makes each commit
durable before the call that made it returns.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlite_utils import Database

__all__ = ["BUSY_TIMEOUT_S", "open_database", "write_transaction"]

#: How long a writer waits for another writer's lock before giving up.
BUSY_TIMEOUT_S = 10.0


def open_database(path: str | Path | None, *, busy_timeout: float = BUSY_TIMEOUT_S) -> Database:
    """Open (creating if needed) the app database with WAL and full sync.

    Args:
        path: the SQLite file, or None for a private in-memory database.
        busy_timeout: seconds a write waits for another writer's lock.
    """
    if path is None:
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    else:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            str(path), timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
    # isolation_level=None: the driver never opens transactions behind our
    # back, so write_transaction decides where each one starts and ends.
    db = Database(conn, execute_plugins=False)
    if path is not None:
        db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
    db.execute("PRAGMA foreign_keys=ON")
    return db


@contextmanager
def write_transaction(db: Database) -> Iterator[Database]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; rolls back on any exception.

    Nested use joins the outer transaction (sqlite-utils' atomic() then uses
    savepoints inside it).
    """
    if db.conn.in_transaction:
        yield db
        return
    db.conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    else:
        try:
            db.conn.execute("COMMIT")
        except BaseException:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            raise
