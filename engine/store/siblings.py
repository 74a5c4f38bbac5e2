"""Stores of one process on one database: each makes way for the others' open batch.

A batch holds the store's write lock (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's
``pg_advisory_xact_lock`` of `engine.store.pg.locks.Lock.WRITE`) from its first
write until its group commit, a turn of the event loop later. Another
connection's wait for that lock is synchronous (SQLite's busy handler, the
PostgreSQL statement): from another process that is fine, but a second store
of this process on the same database waits on the very thread whose loop must
turn for the lock to be let go. The loop froze for the lock's timeout, then
the write failed.

So stores on one database know one another — a SQLite file keyed by device
and inode (`siblings_of`: links and other spellings of the path name the same
file), a PostgreSQL database by its cluster and name (`siblings_of_database`:
the write lock is the database's, whatever the schema) — and before taking the lock
a store commits the open batch of any other on the same thread now
(`Siblings.make_way`): that batch's commit only comes sooner, as it would had
the loop turned. Stores on other threads run their own loops and let go on
their own, as another process does. Two engines on one file in one process are
legitimate (a second view of the same store, several engines' rules tested in
one process), so they are served rather than refused.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Protocol

from engine.core.errors import StoreFailed

__all__ = ["Siblings", "siblings_of", "siblings_of_database"]


class Writer(Protocol):
    """What `Siblings` needs of a store's transactions (`engine.store.transactions`)."""

    @property
    def batch_thread(self) -> int | None:
        """The thread that opened the open batch (None while none is open)."""
        ...

    def flush(self) -> None:
        """Commit the open batch unless it is pinned or being written."""
        ...


class Siblings:
    """The write transactions of this process on one database.

    Args:
        file: the database as an error names it (its file, or its identity).
        key: what tells this database from the others (`siblings_of`).
    """

    def __init__(self, file: str, key: tuple[object, ...]) -> None:
        self.file, self.key = file, key
        self._members: weakref.WeakSet[Writer] = weakref.WeakSet()
        #: More than one store of this process writes on the file: only then has
        #: `make_way` anything to do (read before every batch; a store collected
        #: unclosed may leave it set, which costs a look, nothing else).
        self.shared = False

    def writers(self) -> int:
        """How many stores of this process write on the file."""
        return len(self._members)

    def join(self, writer: Writer) -> None:
        """``writer`` writes on this file from now."""
        self._members.add(writer)
        self.shared = len(self._members) > 1

    def leave(self, writer: Writer) -> None:
        """``writer`` is closed: forget it (and the file once nobody writes on it)."""
        self._members.discard(writer)
        self.shared = len(self._members) > 1
        if not self._members and _OPEN.get(self.key) is self:
            del _OPEN[self.key]

    def make_way(self, writer: Writer) -> None:
        """Commit every other store's batch open on this thread, before ``writer`` takes
        the write lock.

        Raises:
            StoreFailed: one cannot be committed now (a retry holds its batch
                open to its end): waiting in SQLite's busy handler would hold
                this thread, and so that retry, until ``busy_timeout``.
        """
        me = threading.get_ident()
        for other in list(self._members):
            if other is writer or other.batch_thread != me:
                continue
            other.flush()
            if other.batch_thread == me:
                raise StoreFailed(f"the change was not written, so it did not happen: "
                                  f"another engine of this process holds the write lock "
                                  f"on {self.file} until its operation ends",
                                  reason="locked")


#: The databases written on in this process: SQLite files by ("file", device,
#: inode), PostgreSQL databases by ("postgresql", identity).
_OPEN: dict[tuple[object, ...], Siblings] = {}


def siblings_of(file: str) -> Siblings:
    """The stores of this process on ``file`` (an open database file)."""
    st = os.stat(file)
    return _siblings(file, ("file", st.st_dev, st.st_ino))


def siblings_of_database(identity: str) -> Siblings:
    """The stores of this process on the PostgreSQL database ``identity`` (its cluster
    and name, `engine.store.pg.anchoring.database_identity` without the schema: the
    write lock is the database's)."""
    return _siblings(identity, ("postgresql", identity))


def _siblings(name: str, key: tuple[object, ...]) -> Siblings:
    found = _OPEN.get(key)
    if found is None or not found.writers():
        # None yet, or all were collected unclosed (the inode may be another file's now).
        found = _OPEN[key] = Siblings(name, key)
    return found
