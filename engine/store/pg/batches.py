"""Write batches of the PostgreSQL store: group commit, savepoints, catching up.

The same contract as the SQLite store's `engine.store.transactions.Transactions`,
with a PostgreSQL transaction in place of ``BEGIN IMMEDIATE``:

- A batch is one READ COMMITTED transaction that first takes the store's write
  lock (`Lock.WRITE`, transaction-scoped), so one engine's batch writes at a
  time on the whole database, as one SQLite writer at a time on a file. Every
  other lock of the store (the change feed's) is taken after it, so there is
  one lock order and no deadlock. Waiting for it never holds the event loop
  long: a try waits `TRY_LOCK_S` on the server, and an operation that did not
  get it waits off the loop (`engine.store.transactions.Busy`) and tries again,
  failing closed (reason ``locked``, naming the holder:
  `engine.store.pg.holders`) once another session has held it `WRITE_LOCK_S`.
- Holding the lock, it reads the newest change number (`changes.latest_change`).
  When another engine committed a change since this engine's state was loaded,
  the state catches up (the entities the changes name are read again, or the
  whole state when that cannot be done) and the operation is made again under the lock (the
  `run_durably` retry), reading the time again: a decision is never made on a
  rolling window, a grant or a queue another engine has changed since.
- A batch that changed anything a decision reads (every write but log rows)
  records one change (`changes.record_change`) before it commits, listing
  the entities it touched and the calls it counted; NOTIFY
  tells the other engines, and each operation's first step (`sync`) reads the
  newest number, so an engine has seen every change committed before its
  call began.
- A statement that fails inside a savepoint rolls back that operation alone;
  one that fails outside one (a one-statement write) or a lost connection
  fails the whole batch: PostgreSQL aborts the transaction. Either way the
  callers get `StoreFailed`, the state is rebuilt from the store, and a lost
  connection is made again on the next operation.
- A batch that appended log rows hands its newest row, once committed, to
  this machine's anchor (`engine.store.pg.anchoring.AnchorWriter`, which
  writes it in a thread of its own).
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

from engine.core.errors import EngineClosed, StoreFailed
from engine.core.events import Event
from engine.core.text import one_line
from engine.store import transactions
from engine.store.anchor import Anchor, AnchorFile
from engine.store.database import BUSY_TIMEOUT_S
from engine.store.pg.anchoring import AnchorWriter
from engine.store.pg.changes import (
    ENGINE_MARK,
    latest_change_and_row,
    record_change,
)
from engine.store.pg.holders import is_lock_wait, locked
from engine.store.pg.locks import NAMESPACE, Lock
from engine.store.pg.parts import LOCK_WAIT_S, ROUND_TRIP_S, Link, PGLog
from engine.store.pg.schema import MIGRATIONS, refuse_unknown
from engine.store.ratekeep import RatePruning, prune_statement
from engine.store.siblings import Siblings
from engine.store.transactions import (
    Batch,
    BatchKeeping,
    Busy,
    LockLine,
    Stale,
    Write,
    schedule_flush,
)
from engine.store.writelock import LockWait

__all__ = ["Batches"]

#: The longest the engine goes on trying to take the store's write lock while another
#: session holds it — at most as long as SQLite waits for its own — before its operations
#: fail closed (`StoreFailed`, reason ``locked``, naming the holder): a hung holder (an
#: engine stopped mid-batch; a hand edit left uncommitted at a ``psql`` shell, whose
#: trigger took the lock: `engine.store.pg.schema` m012) never blocks the others for good.
WRITE_LOCK_S = BUSY_TIMEOUT_S
#: How long one try waits for the write lock on the server, the event loop held
#: meanwhile: long enough for the other engines' batches ahead (each holds the lock for
#: a commit's time, a few on a busy machine), so that contention alone seldom makes an
#: operation try again (one made again commits in a batch of its own: fewer share a
#: commit); short enough that a lock held longer leaves the loop free most of the time.
#: An operation that did not get it waits off the loop (`Busy`, `run_durably`) and
#: tries again, until `WRITE_LOCK_S` has passed since the lock was first found taken.
TRY_LOCK_S = 0.05


@functools.lru_cache(maxsize=16)
def _begin(wait: float) -> str:
    """One round trip: open the batch and wait up to ``wait`` seconds for the write lock
    (a hung holder fails the waiter closed, never blocks it for good), then let the
    batch's other statements wait for a lock no longer than any statement of the engine
    (`LOCK_WAIT_S`); learn the transaction's id, by which the fate of a COMMIT whose
    answer was lost is asked (`_fate_of_commit`), and mark the transaction as the
    engine's (`ENGINE_MARK`): the batch records its own change, which the triggers
    recording hand edits must not record again."""
    return (f"begin isolation level read committed;"
            f" set local lock_timeout = '{max(1, int(wait * 1000))}ms';"
            f" select pg_advisory_xact_lock({NAMESPACE}, {int(Lock.WRITE)}), txid_current(),"
            f" {ENGINE_MARK};"
            f" set local lock_timeout = '{int(LOCK_WAIT_S * 1000)}ms'")


#: How often the fate of a COMMIT whose answer was lost is asked while the server
#: is still committing it.
_FATE_POLL_S = 0.05
#: Errors of the store itself (a lost server, a refused value), failing closed.
_STORE_ERRORS = (psycopg.Error, StoreFailed, UnicodeError)


def _no_clock(_t: float | None) -> None:
    """`Batches.at_least` before the store knows the engine's clock (nothing is stamped)."""


#: What a failed write says first.
_NOT_WRITTEN = "the change was not written, so it did not happen"
#: What a failed read says first (a catch-up: nothing was asked to change).
_NOT_READ = "the PostgreSQL store could not be read"


def _failed(exc: BaseException, what: str = _NOT_WRITTEN) -> StoreFailed:
    if isinstance(exc, StoreFailed):
        return exc
    return StoreFailed(f"{what}: {one_line(str(exc))}")


class Batches(BatchKeeping):
    """Opening, joining and committing write batches on the store's connection.

    Args:
        link: the store's connection.
        log: the arrow log (its cached tail is forgotten at each batch).
        reload: rebuilds the in-memory state from the store; the store's
            `load` sets `seen` to the change number it loaded.
        committed: receives a committed batch's events, in order.
        anchor: this machine's anchor of the database, or None for none.
    """

    def __init__(self, link: Link, log: PGLog, *, reload: Callable[[bool], None],
                 committed: Callable[[list[Event]], None],
                 anchor: AnchorFile | None = None,
                 catch_up: Callable[[], bool] | None = None) -> None:
        self.link = link
        self.log = log
        self.anchor = AnchorWriter(anchor) if anchor is not None else None
        self.reload = reload
        self._catch_up = catch_up
        self._committed = committed
        self.batch: Batch | None = None
        self.depth = 0
        self.savepoints = 0
        self.events: list[Event] = []
        self.commits = 0
        #: How often another engine's change made us reload the whole state.
        self.reloads = 0
        #: How often another engine's changes were applied one by one instead.
        self.catchups = 0
        self.revision = 0
        #: The newest change the in-memory state includes (-1: unknown, reload).
        self.seen = -1
        #: Tables the open batch changed (beyond the log): a change to record.
        self.dirty: set[str] = set()
        #: Whether a commit waits for requests a server expects (`schedule_flush`).
        self.hold: Callable[[], float | None] | None = None
        #: What a commit has lately taken (`schedule_flush`).
        self.commit_seconds = 0.0
        #: What the open batch changed, entity by entity ([kind, key, key2, t]),
        #: recorded with its change so that other engines re-read only that.
        self.touched: list[list[Any]] = []
        self._touched_keys: set[tuple[str, str]] = set()
        #: The batch whose COMMIT's answer was lost, while its fate is asked off the
        #: loop (`_ask_off_the_loop`): no operation runs until it is known.
        self.asking: Batch | None = None
        self._asker: threading.Thread | None = None
        #: Length of `touched` at each open savepoint (a rollback cuts it back).
        self._marks: dict[str, int] = {}
        #: The other stores of this process on the same database, whose open batch
        #: this one commits before it waits for the write lock (`open_batch`).
        self.siblings: Siblings | None = None
        self._batch_thread = 0
        #: The open batch's transaction id (`_BEGIN`), None while none is open.
        self._xid: int | None = None
        #: Writes the batch's rows kept in memory till now, just before its COMMIT,
        #: under the write lock (`PGStore.save_budget_bucket`); set by the store.
        self.before_commit: Callable[[psycopg.Connection[Any], Batch], None] | None = None
        #: Raises the engine's clock's floor to a time the store holds (set by the store
        #: once it knows the clock): each look at the store (`sync`, `open_batch`) reads
        #: the newest time its log and consent history hold, in the round trip it makes
        #: anyway, so an engine whose clock is behind another's never stamps before it.
        self.at_least: Callable[[float | None], None] = _no_clock
        #: Log rows this engine's batches committed (`sync` tells the others' apart).
        self.own_rows = 0
        #: How often `sync` found log rows other engines committed (live views follow it).
        self.log_noticed = 0
        #: The newest log row's number less `own_rows`, as `sync` last read it (None:
        #: not read yet): it moves only with other engines' rows.
        self._others: int | None = None
        #: How long tries have found the write lock another session holds, and the
        #: pauses between them (SQLite's store keeps the same: `writelock.LockWait`).
        self.lock_wait = LockWait(None, WRITE_LOCK_S)
        #: The store was closed: no batch opens any more (`open_batch`).
        self.closed = False
        #: The operations waiting off the loop for the write lock (`run_durably`).
        self.line = LockLine()
        #: ``changes.seq // CHANGES_PRUNED_EVERY`` when this engine last pruned (`_prune`).
        self._pruned = -1
        #: When this engine last pruned the counted calls (`_prune`).
        self._rates = RatePruning()
        #: The last store error told as `StoreFailed`, and what it was told as: a lock
        #: wait's holders are asked once, not again by each who reports it.
        self._told: tuple[BaseException, StoreFailed] | None = None

    def touch(self, kind: str, key: str, key2: str | None = None,
              t: float | None = None) -> None:
        """The open batch changed this entity (or counted this call: ``rate``).

        An entity is listed where the batch first touched it, and once more where it
        was last touched when other entries came between (a catch-up tells what it
        came to there, after what the batch did between: `engine.store.loading.Touched`
        takes an entity's first and last entry as its span); a rate every time.
        """
        touched = self.touched
        if kind != "rate":
            if (kind, key) in self._touched_keys:
                tail = touched[-1]
                if tail[0] == kind and tail[1] == key:
                    return  # nothing came between: where it stands already
            else:
                self._touched_keys.add((kind, key))
        touched.append([kind, key, key2, t])

    def _forget_touched(self, mark: int = 0) -> None:
        del self.touched[mark:]
        self._touched_keys = {(e[0], e[1]) for e in self.touched if e[0] != "rate"}

    def reload_or_mark(self) -> None:
        """Reload the state; when the store cannot be read, reload at the next chance."""
        try:
            self.reload(False)
        except _STORE_ERRORS:
            self.seen = -1

    def open_batch(self, *, locked: bool = False, settled: bool = False,
                   settled_try: bool = False) -> Batch:
        """Begin, take the write lock, catch up; schedule the group commit.

        Raises:
            Stale: another engine committed a change since the state was
                loaded (reloaded now): `run_durably` makes the operation again
                with ``locked``. Never with ``settled`` (the batch records what
                already happened: there is no decision left to make again;
                `open_settled`); with ``locked`` only as `Busy`.
            Busy: another session holds the write lock (nothing was written), or
                operations of this engine wait for it already (`LockLine`):
                `run_durably` tries again after a pause, off the loop, in turn. Never
                with ``settled``, which waits for the lock up to `WRITE_LOCK_S`.
            StoreFailed: the store cannot be reached or refused the batch; reason
                ``locked`` once another session has held the write lock for
                `WRITE_LOCK_S` (naming it); `EngineClosed` once the store closed.

        ``settled_try``: as ``settled``, but one short try for the lock, then `Busy`
        (the caller waits off the loop: `open_settled` without ``wait``).
        """
        settled = settled or settled_try
        if self.closed:
            # An operation that paused for the write lock (`Busy`) while the store
            # closed: it ends here, rather than connecting the closed store again.
            raise EngineClosed()
        if self.line.waiting and not (locked or settled):
            raise Busy(0.0)  # after the operations waiting for the lock, in turn
        self._refuse_while_asking()
        self.log.start_batch()
        siblings = self.siblings
        if siblings is not None and siblings.shared:
            # Another engine of this process holding the lock lets go of it only
            # when the loop turns: waiting for it here would freeze the loop.
            siblings.make_way(self)
        left = self.lock_wait.remaining()
        # A decision tries briefly and waits off the loop (`Busy`); a settled write,
        # which cannot be made again, waits here — no longer than the bound has left.
        wait = left if settled and not settled_try else min(TRY_LOCK_S, left)
        self._xid = None
        try:
            conn = self.link.conn
            # The lock wait is bounded by the server (lock_timeout); the
            # round trip may take that long, and a little more, before the
            # server is taken for gone.
            with conn.patience(max(wait, 0.0) + ROUND_TRIP_S):
                begun = conn.execute(_begin(wait))
            begun.nextset()  # past BEGIN and SET: to the lock's row
            begun.nextset()
            locked_row = begun.fetchone()
            self._xid = None if locked_row is None else int(locked_row[1])
            self.lock_wait.had()
            latest, _newest, t, migrated = latest_change_and_row(conn)
            _refuse_migrated(conn, migrated)
            # What this batch stamps comes after whatever other engines stamped (`sync`).
            self.at_least(t)
            if latest != self.seen:
                # Holding the write lock now: what we decided on may be stale.
                changed = self.catch_up()
                if changed and not (locked or settled):
                    conn.execute("rollback")
                    raise Stale()
        except _STORE_ERRORS as exc:
            self.link.abandon()
            if is_lock_wait(exc) and self._xid is None:
                # The first round trip's only wait is the write lock's.
                raise self._lock_busy(settled and not settled_try, exc) from exc
            self.seen = -1
            raise self.failure_of(exc) from exc
        batch = Batch(None, pinned=locked)
        self.batch = batch
        self._batch_thread = threading.get_ident()
        try:
            schedule_flush(self, batch)
        except RuntimeError:
            pass  # no loop: `write` flushes at once
        return batch

    def _lock_busy(self, settled: bool, exc: BaseException) -> BaseException:
        """The write lock was not had in this try: `Busy` while the bound lasts, then
        (and for a settled write at once) `StoreFailed` naming who holds it."""
        if self.lock_wait.left() <= 0 or settled:
            return locked(_NOT_WRITTEN, WRITE_LOCK_S, self.link.conn_if_open(), exc)
        return Busy(self.lock_wait.pause())

    def execute(self, sql: str) -> None:
        """Run one statement of the batch (a savepoint's)."""
        self.link.conn.execute(sql)
        if sql.startswith("SAVEPOINT "):
            self._marks[sql[len("SAVEPOINT "):]] = len(self.touched)
        elif sql.startswith("RELEASE "):
            self._marks.pop(sql[len("RELEASE "):], None)

    def failure(self, exc: BaseException) -> StoreFailed | None:
        """A store error (a lost server, a refused value) as `StoreFailed`; None otherwise."""
        return self.failure_of(exc) if isinstance(exc, _STORE_ERRORS) else None

    def failure_of(self, exc: BaseException) -> StoreFailed:
        """``exc`` as the `StoreFailed` the operation fails with; a lock another session
        held past the lock timeout as reason ``locked``, naming the sessions holding the
        store's locks (asked once for ``exc``, on the connection if it is still open)."""
        told = self._told
        if told is not None and told[0] is exc:
            return told[1]
        failed = (locked(_NOT_WRITTEN, LOCK_WAIT_S, self.link.conn_if_open(), exc)
                  if is_lock_wait(exc) else _failed(exc))
        self._told = (exc, failed)
        return failed

    def read_failure(self, exc: BaseException) -> StoreFailed:
        """``exc``, raised by a read (a catch-up), as the `StoreFailed` it fails with: in
        a read's words, "could not be read", never a write's (nothing was asked to change);
        a lock another session held past the lock timeout as reason ``locked``."""
        if is_lock_wait(exc):
            return locked(_NOT_READ, LOCK_WAIT_S, self.link.conn_if_open(), exc)
        return _failed(exc, _NOT_READ)

    @staticmethod
    def log_mark() -> object:
        """None: the PostgreSQL log writes its rows as they come (nothing to mark)."""
        return None

    def undo(self, batch: Batch, savepoint: str | None, exc: BaseException,
             log_mark: object = None) -> None:
        """Roll back to ``savepoint``; fail the batch when its transaction is gone."""
        link = self.link
        kept = False
        if link.in_transaction():
            conn = link.conn
            try:
                if savepoint is not None:
                    conn.execute(f"rollback to {savepoint}")
                    conn.execute(f"release {savepoint}")
                    # What the operation touched is undone: not a change.
                    self._forget_touched(self._marks.pop(savepoint, len(self.touched)))
                kept = conn.info.transaction_status == TransactionStatus.INTRANS
            except psycopg.Error:
                kept = False
        if not kept:
            # The transaction is gone (a failed statement outside a savepoint
            # aborts it; a lost connection ends it): every operation in this
            # batch failed with it.
            link.abandon()
        # Told now, while the connection can still ask who held a lock (before a reload).
        failed = self.failure_of(exc)
        if not kept:
            self._lose(batch, failed)
        self.reload_or_mark()
        if self.batch is batch and not link.in_transaction():
            # The reload failed inside the batch (a table still locked) and took its
            # transaction with it: the operations that joined it failed too.
            self._lose(batch, failed)

    def _lose(self, batch: Batch, failed: StoreFailed) -> None:
        """``batch``'s transaction is gone: every operation in it fails with ``failed``."""
        if self.batch is batch:
            self.batch = None
            self.dirty.clear()
            self._forget_touched()
            self._marks.clear()
            batch.finish(failed)

    def write(self, *, one_statement: bool = False) -> Write:
        """The writes of one operation (see `engine.store.base.Store.write`)."""
        return Write(self, one_statement)

    def flush(self) -> None:
        """Record the batch's change if it made one, commit, then events and waiters."""
        batch = self.batch
        if batch is None or batch.pinned or self.depth:
            return
        self.batch = None
        # Its events are the batch's own (delivered once committed): not kept
        # alive here until the next operation's write replaces the list.
        self.events = []
        dirty = sorted(self.dirty)
        self.dirty.clear()
        touched = self.touched
        if "secrets" in dirty:
            touched.append(["secrets", None, None, None])
        self.touched, self._touched_keys, self._marks = [], set(), {}
        seq: int | None = None
        pending: Anchor | None = None
        try:
            conn = self.link.conn
            if conn.info.transaction_status != TransactionStatus.INTRANS:
                # A failed transaction "commits" as a rollback: never report it done.
                raise StoreFailed("the batch's transaction was lost before "
                                  "its commit, so its changes did not happen")
            if self.before_commit is not None:
                self.before_commit(conn, batch)
            if dirty:
                seq = record_change(conn, "state", {"tables": dirty, "touched": touched},
                                    t=time.time())
                if seq // transactions.CHANGES_PRUNED_EVERY != self._pruned:
                    self._prune(conn, seq)
            pending = self._newest_of_batch(conn)
            # The rows the batch appends (numbered without gaps under the write lock):
            # once committed, this engine's own, which wake none of its live views.
            before = self.log.batch_before
            rows = 0 if pending is None or before is None else pending.seq - before[0]
            xid, self._xid = self._xid, None
            try:
                status = conn.execute("commit").statusmessage
            except psycopg.OperationalError as exc:
                # COMMIT was sent and its answer lost (the connection dropped, or
                # the server took longer than a round trip): it may have committed.
                if self._ask_off_the_loop(batch, xid, exc, seq, pending, rows):
                    return
                status = self._fate_of_commit(xid, exc)
            if status != "COMMIT":
                raise StoreFailed(f"the batch was rolled back at commit "
                                  f"({status}), so its changes did not happen")
        except _STORE_ERRORS as exc:
            self._not_committed(batch, exc)
            return
        self._committed_now(batch, seq, pending, rows)

    def _prune(self, conn: psycopg.Connection[Any], seq: int) -> None:
        """What the store keeps no more, pruned once every `CHANGES_PRUNED_EVERY` changes
        (``seq``: the batch's), as SQLite's commit does (`Transactions.flush`): the change
        feed's rows but the newest `CHANGES_KEPT` (an engine further behind reloads
        everything; the newest stays, so the next change's number follows it), and the
        counted calls no window counts any more, when due (`engine.store.ratekeep`). The
        transaction is the engine's (`ENGINE_MARK`): no trigger records the deletes as
        a hand's change, which would have every engine read its windows again."""
        self._pruned = seq // transactions.CHANGES_PRUNED_EVERY
        conn.execute("delete from changes where seq <= %s", [seq - transactions.CHANGES_KEPT])
        t = self._rates.due_in(conn)
        if t is not None:
            conn.execute(prune_statement("%(t)s"), {"t": t})

    def _not_committed(self, batch: Batch, exc: BaseException) -> None:
        """The batch did not commit (or cannot be known to have): its callers fail closed."""
        self.link.abandon()
        failed = self.failure_of(exc)
        self.reload_or_mark()
        batch.finish(failed)

    def _committed_now(self, batch: Batch, seq: int | None, pending: Anchor | None,
                       rows: int = 0) -> None:
        """The batch committed: its change is seen, its log row anchored, its events told;
        its ``rows`` log rows are this engine's own (`sync`)."""
        self.commits += 1
        self.own_rows += rows
        if seq is not None:
            self.seen = seq
        if self.anchor is not None and pending is not None:
            # Committed: the anchor may name it now or a little later (a
            # thread writes it); until then it names an older row, which
            # these follow, so the log verifies meanwhile.
            self.anchor.advance(pending)
        self.revision += 1
        try:
            self._committed(batch.events)
        finally:
            # Committed: every caller gets its answer, whatever delivering the
            # events did (a listener that raised must not leave calls hanging).
            batch.finish(None)

    def _refuse_while_asking(self) -> None:
        """Fail an operation closed while a lost COMMIT's fate is asked: the state holds
        that batch's changes, which may not have happened."""
        if self.asking is not None:
            raise StoreFailed("an earlier batch's COMMIT lost its answer and what became of "
                              "it is still being asked: nothing is decided meanwhile")

    def _ask_off_the_loop(self, batch: Batch, xid: int | None,
                          lost: psycopg.OperationalError, seq: int | None,
                          pending: Anchor | None, rows: int = 0) -> bool:
        """Ask a lost COMMIT's fate (`_fate_of_commit`) in a thread of its own, on a
        connection of its own, and settle ``batch`` on the loop once it is known.

        Polling the server (up to `BUSY_TIMEOUT_S`, each try a connection and a round
        trip) on the loop's thread would hold the whole engine meanwhile. Operations
        fail closed until the fate is known (`_refuse_while_asking`). False when
        there is no loop to return to, or nothing to ask: the caller asks itself.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        if xid is None:
            return False
        self.link.close()
        self.asking = batch
        changed = self.reloads + self.catchups

        def ask() -> None:
            fate: str | BaseException
            opened: list[psycopg.Connection[Any]] = []

            def connection() -> psycopg.Connection[Any]:
                # One connection of this thread's own for every try (the store's is
                # the loop's), closed once the fate is known.
                if not opened:
                    opened.append(self.link.connect())
                return opened[0]

            try:
                fate = _fate_on(connection, xid, lost)
            except BaseException as exc:  # noqa: BLE001 - settled as not known, on the loop
                fate = exc
            finally:
                for conn in opened:
                    conn.close()
            try:
                loop.call_soon_threadsafe(self._fate_known, batch, fate, seq, pending,
                                          changed, rows)
            except RuntimeError:
                pass  # the loop is closed: `await_fate` (at close) settles it

        self._asker = threading.Thread(target=ask, name="arrowgate-commit-fate", daemon=True)
        self._asker.start()
        return True

    def _fate_known(self, batch: Batch, fate: str | BaseException, seq: int | None,
                    pending: Anchor | None, changed: int, rows: int = 0) -> None:
        """Settle ``batch`` as its COMMIT ended (on the loop, or at close)."""
        if self.asking is not batch:
            return  # settled already (at close)
        self.asking = None
        self._asker = None
        if fate != "COMMIT":
            exc = fate if isinstance(fate, BaseException) else StoreFailed(
                f"the batch was rolled back at commit ({fate}), so its changes did not "
                "happen")
            self._not_committed(batch, exc)
            return
        if self.reloads + self.catchups != changed:
            # The state was read again meanwhile, maybe before the COMMIT ended:
            # read it again at the next operation rather than trust it holds it.
            seq = None
            self.seen = -1
        self._committed_now(batch, seq, pending, rows)

    def await_fate(self, timeout: float = BUSY_TIMEOUT_S + 2 * ROUND_TRIP_S) -> None:
        """At close: wait (up to ``timeout``) for a lost COMMIT's fate still being asked,
        and settle its batch; one not known by then fails closed."""
        batch, asker = self.asking, self._asker
        if batch is None or asker is None:
            return
        asker.join(timeout)
        if self.asking is batch:
            # Its answer is in the loop's queue, which may never run again: settle here.
            self.asking = self._asker = None
            self._not_committed(batch, StoreFailed(
                "the engine closed before what became of a batch's lost COMMIT was "
                "settled: its changes may or may not have happened"))

    def _fate_of_commit(self, xid: int | None, lost: psycopg.OperationalError) -> str | None:
        """What became of a COMMIT whose answer was lost: ``"COMMIT"`` when the server
        committed the transaction, ``"ROLLBACK"`` when it did not.

        Asked on a new connection (``txid_status``), waiting while the server is still
        committing, at most as long as a batch waits for the write lock. Answering
        "done" for a batch not known to be durable, or "did not happen" for one that
        is, would both break SPEC §10 "Storage".

        Raises:
            StoreFailed: the fate cannot be learnt (the server cannot be asked, or
                is still committing); the message says the change may have happened.
        """
        self.link.close()
        try:
            return _fate_on(lambda: self.link.conn, xid, lost)
        except StoreFailed:
            self.link.abandon()
            raise

    def _newest_of_batch(self, conn: psycopg.Connection[Any]) -> Anchor | None:
        """Before COMMIT, under the write lock: the batch's newest log row, for the anchor
        and the count of this engine's own rows (None when the batch left no row of its
        own).

        No "pending" record is written before COMMIT, unlike SQLite's anchor:
        on a shared database rows after this machine's newest are never a
        finding, so a crash between COMMIT and the anchor's update only leaves
        the anchor one batch behind, and the write lock is not held through
        an fsync.
        """
        before = self.log.batch_before
        if before is None:
            return None
        # The newest row as it stands now: a savepoint rolled back may have
        # taken the batch's rows away again.
        row = conn.execute("select seq, hash from log order by seq desc limit 1").fetchone()
        if row is None or (int(row[0]), str(row[1])) == before:
            return None
        return Anchor(int(row[0]), str(row[1]))

    def pin_and_flush(self) -> None:
        """Commit what is pending now, even a batch a locked retry holds (at close)."""
        if self.batch is not None:
            self.batch.pinned = False
            self.flush()

    def sync(self) -> None:
        """Reload the state when another engine committed a change since it was loaded.

        Raises:
            StoreFailed: the store cannot be reached (the operation fails closed).
        """
        self._refuse_while_asking()
        if self.batch is not None and self.link.in_transaction():
            # Our open batch holds the write lock: nobody else can commit a
            # change until we do, so there is nothing to catch up on.
            return
        try:
            latest, newest, t, migrated = latest_change_and_row(self.link.conn)
            _refuse_migrated(self.link.conn, migrated)
            self.at_least(t)
            if latest != self.seen:
                self.catch_up()
        except _STORE_ERRORS as exc:
            self.link.abandon()
            self.seen = -1
            raise self.read_failure(exc) from exc
        # A batch of log rows only (a refused call) records no change: another engine's
        # is told by the log's numbers moving past what this engine appended itself.
        others = newest - self.own_rows
        if self._others is not None and others != self._others:
            self.log_noticed += 1
        self._others = others


def _refuse_migrated(conn: psycopg.Connection[Any], migrated: int) -> None:
    """Refuse the store once its migrations ledger records a position past this code's
    chain (``migrated``, read with the newest change: no round trip of its own): a newer
    engine migrated it while this one had it open, and rows written in this engine's
    format into a schema it does not know could be misjudged by the engine that made it.
    The open transaction, if any, is rolled back: nothing of this engine's is written.

    Raises:
        StoreFailed: reason ``schema-mismatch``, as opening it would be refused.
    """
    if migrated < len(MIGRATIONS):
        return
    try:
        refuse_unknown(conn)
    except StoreFailed:
        if conn.info.transaction_status != TransactionStatus.IDLE:
            conn.execute("rollback")
        raise


def _fate_on(connect: Callable[[], psycopg.Connection[Any]], xid: int | None,
             lost: psycopg.OperationalError) -> str:
    """``"COMMIT"`` or ``"ROLLBACK"``: what the server did with transaction ``xid``,
    asked (``txid_status``) on a connection from ``connect``, polled while the server
    is still committing, at most `BUSY_TIMEOUT_S`.

    Raises:
        StoreFailed: the fate cannot be learnt (the server cannot be asked, is still
            committing, or no longer knows the id); the change may have happened.
    """
    unknown = (f"the answer to the batch's COMMIT was lost ({lost}) and whether it "
               "committed cannot be learnt")
    if xid is None:
        raise StoreFailed(f"{unknown}: its changes may or may not have happened") from lost
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            row = connect().execute("select txid_status(%s)", [xid]).fetchone()
        except (psycopg.Error, StoreFailed) as exc:
            raise StoreFailed(f"{unknown} ({one_line(str(exc))}): its changes may or may not have "
                              "happened") from lost
        fate = None if row is None else row[0]
        if fate == "committed":
            return "COMMIT"
        if fate == "aborted":
            return "ROLLBACK"
        if fate is None or time.monotonic() >= deadline:
            # None: the id is too old to be known any more.
            raise StoreFailed(f"{unknown} (the server says {fate or 'nothing'}): its "
                              "changes may or may not have happened") from lost
        time.sleep(_FATE_POLL_S)
