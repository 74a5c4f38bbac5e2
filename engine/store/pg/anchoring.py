"""This machine's anchor of a PostgreSQL store's arrow log (issue 20).

The hash chain shows that no row was altered, removed or inserted between
rows, but a person who may write the ``log`` table can cut off its newest rows
or rewrite the whole chain consistently. On SQLite the anchor file beside the
database closes that gap; a PostgreSQL database has no "beside", and many
engines on many machines append to it.

So each machine keeps its own anchor: one `AnchorFile` per database, in the
``anchors`` folder of the user's data folder (beside the default database,
`engine.store.database.default_database_path`), named after the database's
identity: the cluster's system identifier, the database's name and the
schema. Those are not something a writer of the tables can change. Every
batch that appends rows reads its newest row under the store's write lock and,
once it has committed, records ``{"committed": <that row>}``
(`engine.store.pg.batches`). Unlike SQLite's anchor there is no "pending"
record before COMMIT: rows after this machine's newest are never a finding
here, so a crash between COMMIT and the update leaves the anchor one batch
behind, which verifies, and the write lock is never held through an fsync.
(A pending record an older version or a crash left is still accepted.)

What `check` can vouch for differs from SQLite: other engines append after
this machine's newest row, so rows beyond it are never a finding. It finds:

- rows cut off the end, down to or below the newest row this machine's engines
  committed (the row is missing);
- a chain rewritten consistently up to that row (the row is there, with
  another hash).

It cannot find rows appended after that row, whether by another engine or by
a forger who knows the hash function, nor anything on a machine whose engines
never wrote: such a machine has no anchor, and its `log verify` says so.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg import Connection

from engine.store.anchor import Anchor, AnchorFile, AnchorState
from engine.store.database import default_database_path
from engine.store.log import Verification

#: Where a failed anchor write, and its recovery, are told (`AnchorWriter`).
_log = logging.getLogger("arrowgate.anchor")

__all__ = ["AnchorWriter", "anchor_folder", "check", "cluster_database", "database_identity",
           "local_anchor"]


def anchor_folder() -> Path:
    """Where this user's anchors of PostgreSQL stores live: ``anchors`` beside the default
    database (``$ARROWGATE_DB``'s folder, else ``~/.local/share/arrowgate``)."""
    return default_database_path().parent / "anchors"


def database_identity(conn: Connection[Any]) -> str:
    """The database's identity: system identifier, database name and schema.

    ``pg_control_system()`` may be refused to a role without the privilege;
    the server's address and port stand in for the cluster then.
    """
    database = cluster_database(conn)
    schema = conn.execute("select current_schema()").fetchone()
    return f"{database}/{schema[0] if schema else '?'}"


def cluster_database(conn: Connection[Any]) -> str:
    """The database's cluster and name, without the schema (`database_identity`): what
    the store's write lock belongs to (advisory locks are the database's)."""
    try:
        row = conn.execute("select system_identifier::text from pg_control_system()").fetchone()
        cluster = f"system:{row[0]}" if row else "system:?"
    except psycopg.errors.InsufficientPrivilege:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("rollback")
        row = conn.execute("select coalesce(host(inet_server_addr()), 'local'),"
                           " coalesce(inet_server_port(), 0)").fetchone()
        cluster = f"server:{row[0] if row else '?'}:{row[1] if row else 0}"
    database = conn.execute("select current_database()").fetchone()
    return f"{cluster}/{database[0] if database else '?'}"


def local_anchor(conn: Connection[Any], folder: Path | None = None, *,
                 make: bool = True) -> AnchorFile:
    """This machine's anchor file of the database ``conn`` is connected to.

    The file's name is a digest of `database_identity` (names may hold any
    character); the folder is made when missing, unless ``make`` is False (a
    reader, which only reads an anchor that is there: a look at the log leaves
    this machine's folders as it found them).
    """
    identity = database_identity(conn)
    digest = hashlib.sha256(identity.encode()).hexdigest()[:32]
    where = folder if folder is not None else anchor_folder()
    if make:
        where.mkdir(parents=True, exist_ok=True)
    return AnchorFile(where / f"{digest}.anchor")


def check(result: Verification, anchor_file: AnchorFile,
          hash_at: Callable[[int], str | None], newest: int) -> Verification:
    """The chain's verification ``result``, then this machine's anchor against it.

    Args:
        result: the chain's verification (returned as is when it failed).
        anchor_file: this machine's anchor of the database.
        hash_at: the hash of the row with a sequence number, or None when
            there is no such row.
        newest: the newest row's sequence number (0: an empty log).
    """
    if not result.ok:
        return result
    try:
        state = anchor_file.read()
    except ValueError as exc:
        return Verification(False, result.rows, None, str(exc))
    if state is None or state.committed is None and state.pending is None:
        return result
    if _present(state.pending, hash_at) or _present(state.committed, hash_at):
        return result
    committed = state.committed
    if committed is None:
        # Only a pending row, which never committed (a crash before COMMIT):
        # this machine vouches for nothing yet.
        return result
    if hash_at(committed.seq) is None:
        start = newest + 1
        return Verification(False, result.rows, start,
                            f"rows {start}..{committed.seq} are missing (this machine's anchor "
                            f"{anchor_file.path} says row {committed.seq} was written)")
    return Verification(False, result.rows, committed.seq,
                        f"row {committed.seq} is not the row this machine's engine committed "
                        f"(anchor {anchor_file.path}): the chain was rewritten")


def _present(row: Anchor | None, hash_at: Callable[[int], str | None]) -> bool:
    return row is not None and hash_at(row.seq) == row.hash



class AnchorWriter:
    """Advances this machine's anchor in a thread of its own, newest row only.

    A write is two fsyncs; made in the batch's path it would hold up every
    engine on the machine that shares the anchor file (its lock is held
    through them). A lagging anchor only vouches for fewer rows (rows after
    it are never a finding), so the engine hands over each committed batch's
    newest row and goes on; rows that arrive while a write is under way are
    folded into the next one. `close` writes what is left before the store
    closes.

    A write that fails fails no commit, but while the anchor lags a rewrite of
    the rows after it is no finding on this machine: the first failure of a run
    of them is told as a warning on the ``arrowgate.anchor`` logger (the file,
    why, the row it could not vouch for), and the write that succeeds again
    likewise, rather than one line for every batch.
    """

    def __init__(self, anchor_file: AnchorFile) -> None:
        self.file = anchor_file
        self._wake = threading.Condition()
        self._next: Anchor | None = None
        self._busy = False
        self._closed = False
        #: Why the last write failed, or "" (told once a run: see the class).
        self.failure = ""
        self._thread: threading.Thread | None = None

    def advance(self, newest: Anchor) -> None:
        """Record ``newest`` (a committed row) in the anchor soon."""
        with self._wake:
            if self._closed:
                self._write(newest)
                return
            if self._next is None or newest.seq > self._next.seq:
                self._next = newest
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="arrowgate-pg-anchor",
                                                daemon=True)
                self._thread.start()
            self._wake.notify_all()

    def flush(self) -> None:
        """Wait until every row handed over is written (or failed)."""
        with self._wake:
            while self._next is not None or self._busy:
                self._wake.wait()

    def close(self) -> None:
        """Write what is left, then stop the thread."""
        with self._wake:
            self._closed = True
            self._wake.notify_all()
        thread = self._thread
        if thread is not None:
            thread.join()
        with self._wake:
            left, self._next = self._next, None
        if left is not None:
            self._write(left)

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._next is None and not self._closed:
                    self._wake.wait()
                if self._next is None:
                    return
                row, self._next = self._next, None
                self._busy = True
            try:
                self._write(row)
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()

    def _write(self, row: Anchor) -> None:
        try:
            self.file.write(AnchorState(row))
        except (OSError, ValueError) as exc:
            # The rows are committed; the anchor names an older row, which
            # they follow. The next batch tries again.
            if not self.failure:
                _log.warning("this machine's anchor %s could not be written (%s): rows from "
                             "row %d on are not vouched for by it, and a rewrite of them is "
                             "no finding here, until a write succeeds", self.file.path, exc,
                             row.seq)
            self.failure = f"{type(exc).__name__}: {exc}"
            return
        if self.failure:
            # A warning too: with no logging set up (`arrowgate serve`), only
            # warnings reach standard error, where the failure was told.
            _log.warning("this machine's anchor %s is written again, up to row %d",
                      self.file.path, row.seq)
        self.failure = ""
