"""Waiting for an SQLite file's write lock without holding the event loop.

Another program may hold the lock for as long as it likes (a ``sqlite3`` shell left in
``BEGIN IMMEDIATE``, a backup tool). SQLite's busy handler waits for it inside the
statement, on the thread that runs it — the event loop's — so the connection's busy
timeout is one short try (`TRY_LOCK_S`): long enough for another engine's commit, which
holds the lock a few milliseconds. An operation that did not get it waits off the loop
(`engine.store.transactions.Busy`: `run_durably` pauses, then tries again) until the
store's bound (its ``busy_timeout``, `engine.store.database.BUSY_TIMEOUT_S`) has passed
since the lock was first found taken, then fails closed: `StoreFailed`, reason
``locked``, naming the program that holds it (`engine.store.fileholders`). The same as
the PostgreSQL store's write lock (`engine.store.pg.batches`).
"""

from __future__ import annotations

import sqlite3
import time

from engine.core.errors import StoreFailed
from engine.store.fileholders import holders

__all__ = ["TRY_LOCK_S", "LockWait", "is_busy"]

#: How long one try waits for the write lock in SQLite's busy handler, the event loop
#: held meanwhile.
TRY_LOCK_S = 0.05
#: The pause between two tries of an operation waiting for the write lock: doubling
#: from the first to the last.
_PAUSES = (0.005, 0.1)
#: Tries this far apart are two waits, not one (operations waiting try far more often):
#: a lock taken now is waited for afresh, however long one was taken before.
_GAP_S = 1.0


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite giving up a wait for a lock another connection holds."""
    return (isinstance(exc, sqlite3.OperationalError)
            and getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY)


class LockWait:
    """How long one store has found its file's write lock taken, and what a try that did
    not get it ends in.

    Args:
        file: the database file (whose lock's holders `locked` names); None for a store
            that names them itself (PostgreSQL's: `engine.store.pg.holders.locked`).
        bound: the longest the engine goes on trying, in seconds.
    """

    __slots__ = ("bound", "file", "since", "_last", "_pause")

    def __init__(self, file: str | None, bound: float) -> None:
        self.file, self.bound = file, bound
        #: Since when (`time.monotonic`) the lock has been found taken; None once a try
        #: took it (`had`), or none found it taken.
        self.since: float | None = None
        self._last = 0.0
        self._pause = _PAUSES[0]

    def had(self) -> None:
        """A try took the lock: the wait is over."""
        self.since, self._pause = None, _PAUSES[0]

    def remaining(self) -> float:
        """Before a try: the seconds left of the bound for the wait it belongs to (the
        whole bound when no try found the lock taken lately)."""
        now = time.monotonic()
        if self.since is None or now - self._last > _GAP_S:
            return self.bound
        return self.bound - (now - self.since)

    def left(self) -> float:
        """A try did not take the lock: the seconds left of the bound for this wait
        (none left: fail closed); the wait begins now unless a try found the lock taken
        less than `_GAP_S` ago."""
        now = time.monotonic()
        if self.since is None or now - self._last > _GAP_S:
            self.since = now
        self._last = now
        return self.bound - (now - self.since)

    def pause(self) -> float:
        """The seconds to pause, off the loop, before the next try (doubling)."""
        pause, self._pause = self._pause, min(self._pause * 2, _PAUSES[1])
        return pause

    def locked(self, exc: BaseException) -> StoreFailed:
        """The `StoreFailed` (reason ``locked``) of a write given up after the bound,
        naming who holds the lock now. It says no time to retry (the service's
        ``Retry-After``): the lock is free when that program ends its transaction,
        which nothing here can foresee; the bound has been waited already."""
        failed = StoreFailed(
            "the change was not written, so it did not happen: the database is locked by "
            f"another program, which held its write lock for more than {self.bound:g} s "
            f"(the busy timeout ran out); {holders(self.file or '')}. End that program's "
            "transaction (COMMIT or ROLLBACK, or quit it) and it works again",
            reason="locked")
        failed.__cause__ = exc
        return failed
