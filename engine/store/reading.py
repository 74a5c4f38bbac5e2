"""A database as the log, the consent history and the migrations ledger read it.

They ask three things of one: its connection, ``execute`` and ``query`` (rows as
dictionaries). sqlite-utils' ``Database`` has them, and so has `PlainDatabase`, a
bare `sqlite3` connection: the verifier process (``python -m engine.store.logindex``,
started for every verification the TUI and the service ask for) reads through it,
because importing sqlite-utils (its plugin hooks and command-line helpers) costs
that short-lived process more than the rest of what it imports.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

__all__ = ["PlainDatabase", "Queryable"]

#: A statement's parameters, as sqlite3 takes them.
Parameters = Sequence[Any] | dict[str, Any] | None


class Queryable(Protocol):
    """What reading the log, the history and the ledger needs of a database."""

    conn: sqlite3.Connection

    def execute(self, sql: str, parameters: Parameters = None) -> sqlite3.Cursor:
        """Run one statement."""

    def query(self, sql: str, params: Parameters = None) -> Iterator[dict[str, Any]]:
        """Run one statement that returns rows, each a dictionary by column name."""


class PlainDatabase:
    """`Queryable` on a bare connection, for reading only: statements run as sqlite3
    runs them (no transaction of its own), rows come as dictionaries."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        #: The connection read through.
        self.conn = conn

    def execute(self, sql: str, parameters: Parameters = None) -> sqlite3.Cursor:
        """Run one statement."""
        return self.conn.execute(sql, () if parameters is None else parameters)

    def query(self, sql: str, params: Parameters = None) -> Iterator[dict[str, Any]]:
        """Run one statement that returns rows, each a dictionary by column name.

        Raises:
            ValueError: the statement returns no rows (as sqlite-utils' ``query``).
        """
        cursor = self.execute(sql, params)
        if cursor.description is None:
            raise ValueError(f"query() is for statements that return rows, not {sql!r}")
        keys = [d[0] for d in cursor.description]
        return (dict(zip(keys, row)) for row in cursor)
