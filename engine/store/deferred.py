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
"""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ["DeferredRows"]

#: A row: its table, its statement and the values it binds.
_Row = tuple[str, str, tuple[Any, ...]]


class DeferredRows:
    """The rows of the open batch not yet written, numbered in the order they came.

    Rows ``[written, appended)`` wait in `pending`; the others are in the
    database. `mark` and `back_to` undo a failed operation's rows (and, when
    its savepoint was rolled back, give back those of earlier operations that
    a `write` in the middle of it had put in).
    """

    __slots__ = ("pending", "_appended", "_written", "_since_mark")

    def __init__(self) -> None:
        self.pending: list[_Row] = []
        self._appended = 0
        self._written = 0
        #: Rows written since the last `mark`, with their numbers.
        self._since_mark: list[tuple[int, _Row]] = []

    def add(self, table: str, sql: str, params: tuple[Any, ...]) -> None:
        """Leave a row of ``table`` to the commit (inside a write)."""
        self.pending.append((table, sql, params))
        self._appended += 1

    def write(self, conn: sqlite3.Connection) -> None:
        """Write every waiting row: a table's rows in order, each run of one statement
        in one ``executemany``.

        All or none: on failure none of them is in the database (they still
        wait, and the caller fails as the statement would have).
        """
        pending = self.pending
        if not pending:
            return
        if len(pending) == 1:
            # One statement is all or none by itself.
            conn.execute(pending[0][1], pending[0][2])
        else:
            by_table: dict[str, list[_Row]] = {}
            for row in pending:
                rows = by_table.get(row[0])
                if rows is None:
                    by_table[row[0]] = [row]
                else:
                    rows.append(row)
            conn.execute("SAVEPOINT deferred_rows")
            try:
                for rows in by_table.values():
                    _write_in_order(conn, rows)
            except BaseException:
                try:
                    conn.execute("ROLLBACK TO deferred_rows")
                    conn.execute("RELEASE deferred_rows")
                except sqlite3.Error:
                    pass  # the transaction is gone, and the rows with it
                raise
            conn.execute("RELEASE deferred_rows")
        first = self._written
        self._since_mark.extend(enumerate(pending, first))
        self._written = first + len(pending)
        self.pending = []

    def mark(self) -> int:
        """Where the rows stand as an operation begins (for `back_to`)."""
        # Every operation comes here (a refusal too): nothing built when nothing
        # was written since the last mark.
        if self._since_mark:
            self._since_mark = []
        return self._appended

    def back_to(self, mark: int, *, rolled_back: bool) -> None:
        """Forget the rows added since `mark`: their operation failed.

        ``rolled_back``: the operation's savepoint was rolled back, and with it
        every row written since `mark`; those added before it wait again.
        """
        appended = mark
        # What was written when the mark was taken: the first row written since,
        # or all that is written now when none was.
        written = self._since_mark[0][0] if self._since_mark else self._written
        # Waiting rows are numbered from `_written`: keep those before the mark.
        del self.pending[max(0, appended - self._written):]
        if rolled_back:
            again = [row for n, row in self._since_mark if n < appended]
            self.pending[:0] = again
            self._written = written
        self._since_mark = []
        self._appended = appended
        if self._written > appended:
            # Rows of the operation were written and stay (no savepoint took
            # them back): the caller fails the whole batch.
            self._written = appended

    def forget(self) -> None:
        """The transaction is gone: so are the rows it had and those waiting."""
        self.pending = []
        self._since_mark = []
        self._written = self._appended


def _write_in_order(conn: sqlite3.Connection, rows: list[_Row]) -> None:
    """One table's rows in order: each run of one statement in one ``executemany``."""
    start = 0
    for end in range(1, len(rows) + 1):
        if end == len(rows) or rows[end][1] != rows[start][1]:
            conn.executemany(rows[start][1], [row[2] for row in rows[start:end]])
            start = end
