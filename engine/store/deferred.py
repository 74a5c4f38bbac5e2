"""Rows an operation leaves to the commit: written together, in order, inside the batch.

An accepted prompt writes its rate event, its prompt row and its agent's
node besides its log row. Each `execute` of its own cost a statement's
preparation look-up, binding and cursor work in Python, and two more
statements (SAVEPOINT and RELEASE) so that a failure part-way could be
undone. Kept here instead (each its statement and values, taken when the
operation gives them: a later change to the object is a row of its own),
they go into the database at the commit, one ``executemany`` for each
run of one statement on a table, like the log's rows (`engine.store.log.ArrowLog.write_pending`);
an operation that writes nothing else needs no savepoint, since forgetting
its rows undoes it.

What reads or writes these tables otherwise first has the rows written
(`write`), so that nothing ever sees the database without them: a reload
after a failed operation, the next prompt position, deleting a card's rate
events or a node. The rows of one table go in in the order they came (a new
prompt's insert before its replacement later in the batch); the order between
tables does not matter.

The values wait in one flat list (strings and numbers, which the cyclic
collector does not track), not as a tuple a row: thousands of rows wait for
each commit, and as many tuples kept alive set off young collections and
moved a full one into the bench's accepted round. Each row's values are
handed to ``executemany`` as a slice made as it is bound.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from engine.store.database import all_or_none

__all__ = ["DeferredRows"]


class DeferredRows:
    """The open batch's rows, numbered in the order they came, until its commit.

    Rows ``[0, written)`` are in the database, the rest wait (`pending`).
    `mark` and `back_to` undo a failed operation's rows (and, when its
    savepoint was rolled back, let the earlier operations' rows that a
    `write` in its middle had put in wait again). `forget` empties it once
    the batch is committed or gone.
    """

    __slots__ = ("_tables", "_sqls", "_ends", "_values", "_written", "_mark_written")

    def __init__(self) -> None:
        self._tables: list[str] = []
        self._sqls: list[str] = []
        #: Where each row's values end in `_values` (they begin where the last row's end).
        self._ends: list[int] = []
        self._values: list[Any] = []
        self._written = 0
        #: `_written` when the last `mark` was taken.
        self._mark_written = 0

    @property
    def pending(self) -> bool:
        """Whether rows wait to be written."""
        return len(self._sqls) > self._written

    def add(self, table: str, sql: str, params: tuple[Any, ...]) -> int:
        """Leave a row of ``table`` to the commit (inside a write); returns its number."""
        values = self._values
        values += params
        self._tables.append(table)
        self._sqls.append(sql)
        ends = self._ends
        ends.append(len(values))
        return len(ends) - 1

    def waits(self, n: int, last: object) -> bool:
        """Whether row ``n`` waits still (added, not written, not taken back) with ``last``
        as its last value, the very object: a row numbered ``n`` again after an undo
        holds another's."""
        return self._written <= n < len(self._ends) and self._values[self._ends[n] - 1] is last

    def write(self, conn: sqlite3.Connection, *, committing: bool = False) -> None:
        """Write every waiting row: a table's rows in order, each run of one statement
        in one ``executemany``.

        All or none: on failure none of them is in the database (they still
        wait, and the caller fails as the statement would have).
        ``committing``: the transaction's COMMIT comes next, and a failure here
        rolls the whole transaction back (`engine.store.transactions.Transactions.flush`):
        the rows need no savepoint of their own to be all or none.
        """
        first, count = self._written, len(self._sqls)
        if first >= count:
            return
        sqls = self._sqls
        if count - first == 1:
            # One statement is all or none by itself.
            conn.execute(sqls[first], self._row(first))
        elif committing:
            self._write_runs(conn, first, count)
        else:
            with all_or_none(conn, "deferred_rows"):
                self._write_runs(conn, first, count)
        self._written = count

    def _write_runs(self, conn: sqlite3.Connection, first: int, count: int) -> None:
        # Rows ``[first, count)``: each table's in order, a run of one statement at once.
        sqls, tables = self._sqls, self._tables
        by_table: dict[str, list[int]] = {}
        for n in range(first, count):
            rows = by_table.get(tables[n])
            if rows is None:
                by_table[tables[n]] = [n]
            else:
                rows.append(n)
        for rows in by_table.values():
            start = 0
            for end in range(1, len(rows) + 1):
                if end == len(rows) or sqls[rows[end]] != sqls[rows[start]]:
                    # (Not many rows to a statement, as the log's: measured, an
                    # accepted prompt cost 7 k instructions more that way; these
                    # tables have change-feed triggers, the log has none.)
                    conn.executemany(sqls[rows[start]], self._rows(rows[start:end]))
                    start = end

    def _row(self, n: int) -> list[Any]:
        return self._values[self._ends[n - 1] if n else 0:self._ends[n]]

    def _rows(self, numbers: list[int]) -> Iterator[list[Any]]:
        # One row's values at a time: bound, then dropped.
        values, ends = self._values, self._ends
        for n in numbers:
            yield values[ends[n - 1] if n else 0:ends[n]]

    def mark(self) -> int:
        """Where the rows stand as an operation begins (for `back_to`)."""
        self._mark_written = self._written
        return len(self._sqls)

    def back_to(self, mark: int, *, rolled_back: bool) -> None:
        """Forget the rows added since `mark`: their operation failed.

        ``rolled_back``: the operation's savepoint was rolled back, and with it
        every row written since `mark`; those added before it wait again.
        """
        if rolled_back:
            self._written = self._mark_written
        elif self._written > mark:
            # Rows of the operation were written and stay (no savepoint took
            # them back): the caller fails the whole batch.
            self._written = mark
        del self._tables[mark:], self._sqls[mark:], self._ends[mark:]
        del self._values[self._ends[mark - 1] if mark else 0:]

    def forget(self) -> None:
        """The batch is committed, or its transaction is gone: no row waits any more."""
        self._tables.clear()
        self._sqls.clear()
        self._ends.clear()
        self._values.clear()
        self._written = self._mark_written = 0
