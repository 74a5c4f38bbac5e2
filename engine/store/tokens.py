"""The HTTP service's token table (``service_tokens``) on connections of its own.

`engine.service.auth.TokenStore` writes from a worker thread: the engine's
group commit holds the write lock until its loop turns, so a write made on
the loop's own thread through the engine's connection could wait for itself.
Each change here commits on its own before returning (``synchronous=FULL``). The
write lock another program holds is waited for as the engine's is, at most the busy
timeout (off the loop: in the worker thread), then the change fails closed as
`StoreFailed`, reason ``locked``, naming the program (`engine.store.writelock`). Any
other failure to write (a full disk; the file or its ``-wal`` removed or replaced under
the service, `engine.store.openfiles`) is `StoreFailed` too: nothing was minted or
revoked, and the service answers 503 as for the engine's own writes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from engine.core.errors import StoreFailed
from engine.store.base import TokenRow
from engine.store.database import BUSY_TIMEOUT_S
from engine.store.openfiles import DatabaseFiles
from engine.store.writelock import LockWait, is_busy

__all__ = ["SQLiteTokens", "token_rows"]

_T = TypeVar("_T")


class SQLiteTokens:
    """`engine.store.base.TokenTable` over the engine's SQLite file.

    Args:
        path: the engine's database file (its migrations made the table).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._read = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        self._write = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S,
                                      isolation_level=None, check_same_thread=False)
        self._write.execute("pragma synchronous=FULL")
        self._lock = threading.Lock()
        #: The file and its log as opened: a write after either was taken away is
        #: refused, as the engine's commits are (`engine.store.openfiles`).
        self._files = DatabaseFiles(self.path)

    def find(self, digest: str) -> tuple[str, str, str] | None:
        """(id, principal, digest) of the live token with this digest, or None.

        Raises:
            StoreFailed: the table could not be read (`_rows`).
        """
        rows = self._rows(
            "select id, principal, hash from service_tokens where hash = ? and revoked is null",
            [digest])
        return None if not rows else (str(rows[0][0]), str(rows[0][1]), str(rows[0][2]))

    def principal_of(self, token_id: str) -> str | None:
        """The principal a token id was minted for (revoked or not), or None.

        Raises:
            StoreFailed: the table could not be read (`_rows`).
        """
        rows = self._rows("select principal from service_tokens where id = ?", [token_id])
        return None if not rows else str(rows[0][0])

    def ids_of(self, principal: str) -> list[str]:
        """The ids of the tokens minted for ``principal`` (revoked or not).

        Raises:
            StoreFailed: the table could not be read (`_rows`).
        """
        return [str(r[0]) for r in self._rows(
            "select id from service_tokens where principal = ?", [principal])]

    def _rows(self, sql: str, params: list[str]) -> list[tuple[object, ...]]:
        """The rows of a read on the read connection; a failure of the store (a damaged
        file, a disk error) as `StoreFailed` in a read's words, as PostgreSQL's token
        table fails (the service answers 503 and lets nobody in), never sqlite3's own.

        Raises:
            StoreFailed: the table could not be read.
        """
        try:
            return list(self._read.execute(sql, params).fetchall())
        except sqlite3.Error as exc:
            raise StoreFailed(f"the service's tokens could not be read from {self.path}: "
                              f"{exc}") from exc

    def _written(self, change: Callable[[], _T]) -> _T:
        """``change()`` on the write connection, once the database file is still the one
        opened (`DatabaseFiles`); the write lock another program held past the busy
        timeout as `StoreFailed` (reason ``locked``), naming it, and any other failure
        of the store (a full disk, the file taken away) as `StoreFailed` too.

        Raises:
            StoreFailed: nothing was written.
        """
        with self._lock:
            try:
                self._files.check()
                return change()
            except sqlite3.OperationalError as exc:
                if is_busy(exc):
                    raise LockWait(self.path, BUSY_TIMEOUT_S).locked(exc) from exc
                failure: Exception = exc
            except (sqlite3.Error, OSError) as exc:
                failure = exc
            raise StoreFailed(f"the change was not written, so it did not happen: {failure}"
                              ) from failure

    def insert(self, token_id: str, digest: str, principal: str, t: float) -> None:
        """Add a token, committed before returning."""
        self._written(lambda: self._insert(token_id, digest, principal, t, None))

    def insert_within(self, token_id: str, digest: str, principal: str, t: float,
                      most: int) -> int | None:
        """Add a token, committed before returning, unless ``principal`` holds ``most``
        live tokens already: None when added, else how many it holds.

        Counted inside the insert's own ``BEGIN IMMEDIATE``: the write lock is taken
        before the count, so no other connection (another server's, another
        process's) can add a token between the count and the insert.
        """
        return self._written(lambda: self._insert(token_id, digest, principal, t, most))

    def _insert(self, token_id: str, digest: str, principal: str, t: float,
                most: int | None) -> int | None:
        self._write.execute("begin immediate")
        try:
            if most is not None:
                live = int(self._write.execute(
                    "select count(*) from service_tokens where principal = ? and revoked is null",
                    [principal]).fetchone()[0])
                if live >= most:
                    self._write.execute("rollback")
                    return live
            self._write.execute(
                "insert into service_tokens (id, hash, principal, t) values (?, ?, ?, ?)",
                [token_id, digest, principal, t])
            self._write.execute("commit")
            return None
        except BaseException:
            # A COMMIT that failed (a full disk) leaves the transaction open.
            if self._write.in_transaction:
                self._write.execute("rollback")
            raise

    def revoke(self, token_id: str, t: float) -> bool:
        """Revoke a live token (one statement, committed on its own); False when none."""
        return self._written(lambda: self._write.execute(
            "update service_tokens set revoked = ? where id = ? and revoked is null",
            [t, token_id]).rowcount > 0)

    def listing(self, *, live_only: bool = True) -> list[TokenRow]:
        """Every token (the live ones with ``live_only``), oldest first (`token_rows`).

        Raises:
            StoreFailed: the table could not be read (as `_rows` says it).
        """
        try:
            return token_rows(self._read, live_only=live_only)
        except sqlite3.Error as exc:
            raise StoreFailed(f"the service's tokens could not be read from {self.path}: "
                              f"{exc}") from exc

    def close(self) -> None:
        """Close both connections."""
        self._read.close()
        with self._lock:
            self._write.close()


def token_rows(conn: sqlite3.Connection, *, live_only: bool = True) -> list[TokenRow]:
    """The tokens of the ``service_tokens`` table on ``conn`` (the live ones with
    ``live_only``), oldest first: id, principal, when made and revoked, never the digest."""
    return [TokenRow.read(r) for r in conn.execute(TokenRow.query(live_only=live_only))]
