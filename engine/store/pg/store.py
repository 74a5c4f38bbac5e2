"""The shared store: the `Store` interface on one PostgreSQL database (SPEC §10 "Storage").

Any number of engines, in any number of processes and machines, open the same
database; every rule holds across all of them because:

- each engine's writes go in batches that take one store-wide write lock
  first and commit whole or not at all (`engine.store.pg.batches`): an
  operation's rate event, its rows and its log row commit together, and a
  refusal after them (``QUEUE_FULL``) leaves nothing counted;
- holding the lock, an engine whose state is older than the newest change
  catches up and decides again, reading the time again, so the rolling
  windows, queues, holds and budgets are exact across engines as in one
  process. Catching up re-reads only the entities the newer changes name
  (each change lists what its batch touched: `Batches.touch`), and reloads
  the whole state when a change does not say or there are too many;
- the arrow log and the consent history are appended under that lock, one
  appender at a time: one hash chain each, numbered without gaps;
- every batch that changes what a decision reads records a change
  (`engine.store.pg.changes`), announced by NOTIFY; each operation begins by
  reading the newest change number, so a revoke through one engine is seen
  by every other engine's next call;
- a lost connection fails the operation closed (`StoreFailed`) and the next
  operation connects again.

Opening a store applies the schema's migration chain (`engine.store.pg.schema`)
under its advisory lock, so several engines may open a new database at once.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any, cast

import psycopg
from psycopg.rows import dict_row
from sqlite_utils import Database

from canvas.model import Arrow, Node, Workspace
from engine.core.budget import Bucket
from engine.core.errors import StoreFailed
from engine.core.events import Event
from engine.core.limits import SteadyClock, Suppressed
from engine.core.prompts import Prompt
from engine.core.state import PackageState, State
from engine.core.text import one_line
from engine.core.tools import ToolCall
from engine.store import promptrows
from engine.store.anchor import AnchorFile
from engine.store.base import Refresh, TerminalClaim
from engine.store.buckets import BatchBuckets, bucket_of
from engine.store.canvas import CanvasStore
from engine.store.database import BUSY_TIMEOUT_S
from engine.store.decoding import is_subject, loads
from engine.store.front import BatchFront
from engine.store.loading import MAX_CATCH_UP, CatchUpImpossible, Touched, catch_up, load_state
from engine.store.log import Verification, missing_finding, refuse_missing
from engine.store.pending import encode, row_key, summary_of
from engine.store.pg.anchoring import cluster_database, local_anchor
from engine.store.pg.batches import Batches
from engine.store.pg.changes import follow_changes, latest_change
from engine.store.pg.holders import is_lock_wait, locked
from engine.store.pg.parts import (
    LOCK_WAIT_S,
    Link,
    PGHistory,
    PGLog,
    PGSecrets,
    PGTokens,
    Reader,
    redact,
)
from engine.store.pg.schema import (
    applied,
    migrate,
    missing_tables,
    refuse_lost_ledger,
    refuse_unknown,
)
from engine.store.siblings import siblings_of_database
from engine.store.tokenfeed import TokenFeed
from engine.store.transactions import Batch

__all__ = ["PGStore", "create_schema", "drop_schema", "is_postgres_url"]


def is_postgres_url(text: str) -> bool:
    """True for a ``postgresql://`` (or ``postgres://``) URL: a PostgreSQL store."""
    return text.startswith(("postgresql://", "postgres://"))


def _not_bound(*_args: Any) -> None:
    raise RuntimeError("the store is not bound to an engine yet (Store.bind)")


def _touched_of(subject: Any) -> Any:
    """A ``state`` change's ``touched`` entries as stored, or None when its subject is not
    the object the engine writes (anyone who can write the table may have written any
    text): the caller then reloads in full rather than catching up on it."""
    decoded = loads(subject)
    return decoded.get("touched") if is_subject(decoded) else None


#: The server's clock in SQL (seconds since the epoch), that terminal claims' leases
#: are judged by: one clock for every engine, whatever their machines' clocks say
#: (`engine.services.claims`). ``now()`` is the transaction's start, under the write
#: lock: a claim is judged, if anything, a moment less expired than it is.
_NOW = "extract(epoch from now())::double precision"


def _upsert(table: str, key: str, cols: list[str]) -> str:
    updates = ", ".join(f"{c} = excluded.{c}" for c in cols if c != key)
    return (f"insert into {table} ({', '.join(cols)}) values"
            f" ({', '.join('%s' for _ in cols)}) on conflict ({key}) do update set {updates}")


class _CanvasReader(CanvasStore):
    """`CanvasStore.load` (plain SELECTs) on PostgreSQL; its writers are never called."""

    def __init__(self, reader: Reader) -> None:  # no SQLite migrations here
        self.db = cast(Database, reader)


#: `PGStore.save_pending_summary`'s statement: true when it inserted the row (a row
#: an insert made has no ``xmax``; one the conflict's update replaced has this
#: transaction's), in the one round trip the upsert takes anyway.
_SAVE_PENDING = _upsert("suppressed_pending", "key", ["key", "summary"]) + \
    " returning (xmax = 0)"
#: The statement reading pending summaries (with ``where``: one key's).
_READ_PENDING = "select key, summary from suppressed_pending"
#: `PGStore.save_budget_bucket`'s statement (run at the commit, `_write_buckets`).
_SAVE_BUCKET = _upsert("prompt_budget", "workspace", ["workspace", "level", "at"])
#: `PGStore.budget_bucket`'s statement.
_READ_BUCKET = "select level, at from prompt_budget where workspace = %s"

#: The longest the migrations' round trips may wait at start-up (another process
#: may be migrating the same database).
MIGRATION_S = 300.0
#: The longest the migrations wait, once they have their lock, for a table another
#: session holds locked (a ``LOCK TABLE`` at a ``psql`` shell, a long transaction in
#: the way of an ``ALTER TABLE``): then the open fails closed naming that session
#: (`engine.store.pg.holders`), the store as it was. An engine's own transactions hold
#: a table for a commit's time; as long as an engine waits for the write lock.
MIGRATION_TABLE_LOCK_S = BUSY_TIMEOUT_S
#: The longest one round trip of loading the whole state may wait (`load`).
LOAD_S = 120.0
#: `load`'s bound on waiting for a table lock another session holds (a ``LOCK TABLE``,
#: another process's migration): `LOAD_S` is for reading many rows, not for waiting
#: on someone, so a lock wait ends as any other statement's (`LOCK_WAIT_S`).
_LOAD_LOCK_WAIT = f"set local lock_timeout = '{int(LOCK_WAIT_S * 1000)}ms'"

class PGStore(BatchFront):
    """The `engine.store.base.Store` on one PostgreSQL database.

    Args:
        dsn: a ``postgresql://`` URL.
        schema: the schema to keep the tables in (``search_path``), created by
            the caller; None for the connection's default (``public``).
        connect_timeout: seconds to wait for the server.
        anchors: the folder of this machine's anchors (default
            `engine.store.pg.anchoring.anchor_folder`).
        existing: only a store some engine made already, read as it stands (the
            log's readers: reading must never make one in a database of another
            program, nor upgrade an older store that older engines share).

    Raises:
        StoreFailed: the server cannot be reached, or the database holds a
            schema this engine does not know (it is left untouched), or,
            ``existing``, no store at all (reason ``no-store``; untouched too).
    """

    tx: Batches  #: its batches (`BatchFront` passes the batch operations through)

    def __init__(self, dsn: str, *, schema: str | None = None,
                 connect_timeout: float = 10.0, anchors: Path | None = None,
                 existing: bool = False) -> None:
        self.link = Link(dsn, schema=schema, connect_timeout=connect_timeout)
        try:
            conn = self.link.conn
            if existing and not _has_store(conn):
                raise StoreFailed(f"the PostgreSQL database {redact(dsn)} holds no arrowgate "
                                  "store (no engine has opened it); nothing was written to it",
                                  reason="no-store")
            #: This machine's anchor of the database (`engine.store.pg.anchoring`).
            # A reader (`existing`) writes no anchor, so makes no folder for one.
            self.anchor: AnchorFile = local_anchor(conn, anchors, make=not existing)
            # A newer engine's anchor is refused before anything is written, as a
            # newer engine's migrations are.
            self.anchor.refuse_newer()
            if existing:
                # A reader leaves the schema as it found it: an older store
                # upgraded here could no longer be opened by the older engines
                # that share it. Its log and history read the same either way.
                with conn.transaction():
                    refuse_unknown(conn)
            else:
                # Another process's migration holds the lock for as long as it
                # takes (at start-up, before anyone is served): a longer bound
                # than a served statement's.
                with conn.patience(MIGRATION_S):
                    conn.execute(f"set lock_timeout = '{int(MIGRATION_S * 1000)}ms'")
                    migrate(conn, table_lock_wait=MIGRATION_TABLE_LOCK_S)
                    conn.execute(f"set lock_timeout = '{int(LOCK_WAIT_S * 1000)}ms'")
            database = cluster_database(self.link.conn)
        except psycopg.Error as exc:
            if is_lock_wait(exc) and not existing:
                # Named on the connection, its migrations' transaction rolled back.
                failed = locked(f"cannot open the PostgreSQL store {redact(dsn)}; nothing was "
                                "migrated, so it is as it was", MIGRATION_TABLE_LOCK_S,
                                self.link.conn_if_open(), exc)
                self.link.close()
                raise failed from exc
            self.link.close()
            raise StoreFailed(f"cannot open the PostgreSQL store "
                              f"{redact(dsn)}: {one_line(str(exc))}", reason="connection"
                              ) from exc
        except OSError as exc:
            self.link.close()
            raise StoreFailed(f"cannot make this machine's anchor of the PostgreSQL store "
                              f"{redact(dsn)}: {exc} (the anchors live beside the default "
                              "database: set ARROWGATE_DB to a file in a writable folder)"
                              ) from exc
        except BaseException:
            self.link.close()
            raise
        #: The arrow log (`engine.store.base.Log`).
        self.log = PGLog(self.link)
        #: The consent history (`engine.store.base.History`).
        self.history = PGHistory(self.link)
        self._reload: Callable[[bool], None] = _not_bound
        self._committed: Callable[[list[Event]], None] = _not_bound
        self._refresh: Callable[[Refresh], None] | None = None
        #: Batches, group commit, savepoints and catching up.
        self.tx = Batches(self.link, self.log, reload=lambda elsewhere: self._reload(elsewhere),
                          committed=lambda events: self._committed(events), anchor=self.anchor,
                          catch_up=self._catch_up)
        #: The prompt buckets the open batch read (`budget_bucket`), and those it
        #: changed, written just before its commit (`_write_buckets`).
        self._buckets = BatchBuckets()
        self._changed_buckets = BatchBuckets()
        self.tx.before_commit = self._write_buckets
        #: The operator's secrets (`engine.store.base.Secrets`).
        self.secrets = PGSecrets(self.link, self.tx.dirty)
        #: Service tokens revoked by other engines, as `_catch_up` reads them.
        self.token_feed = TokenFeed()
        #: See `history_edits`.
        self._history_edits = 0
        # Other stores of this process on the database make way for this one's
        # writes, and this one for theirs (`engine.store.siblings`).
        self.tx.siblings = siblings_of_database(database)
        self.tx.siblings.join(self.tx)

    @classmethod
    def open(cls, dsn: str, *, schema: str | None = None,
             anchors: Path | None = None, existing: bool = False) -> PGStore:
        """Open the store at ``dsn`` (applying migrations); see the class."""
        return cls(dsn, schema=schema, anchors=anchors, existing=existing)

    # ------------------------------------------------------------ lifecycle
    @property
    def file(self) -> str | None:
        """None: there is no database file (nor an anchor or drivers' home beside one)."""
        return None

    @property
    def rows_at_commit(self) -> bool:
        """False: each row is written when it is made."""
        return False

    @property
    def log_rows_at_commit(self) -> bool:
        """False: each log row is inserted when it is made (`PGLog.append_fields`)."""
        return False

    @property
    def dsn(self) -> str:
        """The connection URL."""
        return self.link.dsn

    def bind(self, *, reload: Callable[[bool], None],
             committed: Callable[[list[Event]], None],
             refresh: Callable[[Refresh], None] | None = None) -> None:
        """The engine's hooks (see `engine.store.base.Store.bind`)."""
        self._reload, self._committed, self._refresh = reload, committed, refresh

    def load(self, clock: SteadyClock) -> State:
        """The state as the store holds it now, read in one snapshot.

        Inside a batch the write lock keeps other engines' changes out, so
        the batch's own transaction is that snapshot; otherwise a read-only
        REPEATABLE READ transaction is. The newest change number is read in
        the same snapshot: it is what the state includes.
        """
        self.log.forget_tail()
        # The engine's clock: every look at the store raises its floor to the newest
        # time stamped there (`Batches.at_least`).
        self.tx.at_least = clock.at_least
        link = self.link
        own = not link.in_transaction()
        conn = link.conn
        try:
            # A whole world's rows (a million nodes, sorted): one statement may rightly
            # take longer than the store's short round trip before its first row.
            with conn.patience(LOAD_S):
                # In a batch too (a full reload under the write lock, already held):
                # the batch's later statements wait no longer than its round trips.
                conn.execute(("begin isolation level repeatable read read only; "
                              if own else "") + _LOAD_LOCK_WAIT)
                # A table the migrations made and someone dropped since (the log's
                # verbs, which never load, report it: `verify_log`).
                refuse_missing(missing_tables(conn))
                latest = latest_change(conn)
                reader = Reader(conn)
                state = load_state(cast(Database, reader), _CanvasReader(reader), clock)
                self.secrets.reload(conn)
                if own:
                    conn.execute("commit")
        except psycopg.Error as exc:
            link.abandon()
            if is_lock_wait(exc):
                raise locked("cannot read the PostgreSQL store", LOCK_WAIT_S,
                             link.conn_if_open(), exc) from exc
            raise StoreFailed(f"cannot read the PostgreSQL store: {one_line(str(exc))}",
                              reason="connection") from exc
        except StoreFailed:
            # The store holds what the engine never leaves (a row, a missing table):
            # the read-only snapshot ends here, the connection stays usable.
            if own and link.in_transaction():
                conn.execute("rollback")
            raise
        self.tx.seen = latest
        return state

    def _catch_up(self) -> bool:
        """Apply the changes other engines committed since `Batches.seen`.

        Reads them and the rows they name in one snapshot (the batch's, under
        the write lock, or a read-only REPEATABLE READ transaction). A change
        that does not say what it touched (an older engine's, one recorded
        by hand, or a table truncated outside the engine: kind ``reload``,
        `engine.store.pg.schema` m012), too many of them, a gap, an unknown state (``seen``
        -1), or a feed whose newest change is below ``seen`` (its rows deleted by hand)
        reloads the whole state instead. Returns True when the state changed.

        Raises:
            StoreFailed: the store cannot be read.
        """
        link = self.link
        own = not link.in_transaction()
        conn = link.conn
        seen = self.tx.seen
        try:
            if own:
                conn.execute("begin isolation level repeatable read read only")
            rows = conn.execute("select seq, kind, subject from changes where seq > %s"
                                " order by seq limit %s", [seen, MAX_CATCH_UP + 1]).fetchall()
            refresh = self._refresh
            if not rows:
                # Asked because the newest change is not the one seen, yet none is
                # newer (pruning never deletes the newest): the feed was cut back by
                # hand, and the next changes take numbers already seen. Read the store
                # whole, which sees the newest number as it is.
                self.tx.full_reload()
                self.token_feed.changed(None)  # which tokens changed is not known
                changed = True
            else:
                touched = Touched()
                try:
                    if refresh is None or seen < 0 or len(rows) > MAX_CATCH_UP:
                        raise CatchUpImpossible("too far behind")
                    expected = seen + 1
                    for seq, kind, subject in rows:
                        entries = _touched_of(subject) if kind == "state" else None
                        if seq != expected or not isinstance(entries, list):
                            raise CatchUpImpossible(f"change {seq} cannot be applied alone")
                        expected += 1
                        for index, entry in enumerate(entries):
                            if not isinstance(entry, list) or len(entry) != 4:
                                raise CatchUpImpossible(f"change {seq} is malformed")
                            # In the order the batch touched each (again where last touched).
                            touched_kind, key, key2, t = entry
                            touched.add(touched_kind, key, key2, t, (int(seq), index))
                        if touched.count > MAX_CATCH_UP:
                            raise CatchUpImpossible("too many changes")
                    if touched.secrets:
                        self.secrets.reload(conn)
                    reader = cast(Database, Reader(conn))
                    refresh(lambda state, clock, moves: catch_up(reader, state, clock, touched, moves))
                    self.tx.seen = int(rows[-1][0])
                    self.tx.catchups += 1
                    if touched.tokens:
                        self.token_feed.changed(touched.tokens)
                    if "consent" in touched.records:
                        self._history_edits += 1
                except CatchUpImpossible:
                    self.tx.full_reload()
                    self.token_feed.changed(None)  # which tokens changed is not known
                changed = True
            if own:
                conn.execute("commit")
        except psycopg.Error as exc:
            link.abandon()
            self.tx.seen = -1
            raise StoreFailed(f"cannot read the PostgreSQL store: {one_line(str(exc))}",
                              reason="connection") from exc
        return changed

    def close(self) -> None:
        """Write what the anchor still lacks; close the store's connection."""
        self.tx.closed = True
        # A lost COMMIT's fate still asked: its callers are answered before the store goes.
        self.tx.await_fate()
        if self.tx.siblings is not None:
            self.tx.siblings.leave(self.tx)
        try:
            if self.tx.anchor is not None:
                self.tx.anchor.close()
        finally:
            self.link.close()

    # --------------------------------------------------------- transactions
    def sync(self) -> None:
        """Reload the state when another engine committed a change (one short query).

        Raises:
            StoreFailed: the store cannot be reached.
        """
        self.tx.sync()

    async def changes(self, interval: float = 0.1, *,
                      check: Callable[[], None] | None = None) -> AsyncIterator[int]:
        """Yield the store's revision whenever another engine commits a change, or
        log rows alone (`Batches.sync` tells them from this engine's own).

        A thread follows the change feed (LISTEN/NOTIFY, with catch-up reads
        after a reconnection, reconnecting for as long as this runs: a server
        away is waited out, `follow_changes`) and wakes this loop; it also looks every
        ``interval`` seconds (one round trip reading the feed's and the log's
        newest numbers). The state is reloaded only when it is behind.

        Args:
            interval: seconds between two looks.
            check: called before each look; what it raises ends the iteration
                (the engine's `EngineClosed`, once it is closed: a look at a
                closed store would fail with the store's own error, or reopen it).
        """
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()
        stop = threading.Event()

        def follow() -> None:
            try:
                for _seq in follow_changes(self.link.connect, max(self.tx.seen, 0), stop=stop,
                                           poll=max(interval, 0.05) * 10):
                    loop.call_soon_threadsafe(wake.set)
            except (StoreFailed, RuntimeError):
                pass  # the loop closed: this iteration is over (given no bound, the feed never gives up)

        thread = threading.Thread(target=follow, name="arrowgate-pg-changes", daemon=True)
        thread.start()
        tx = self.tx
        seen = tx.reloads + tx.catchups + tx.log_noticed
        try:
            while True:
                if check is not None:
                    check()  # outside the `try`: its error is no outage to wait out
                try:
                    self.sync()
                except StoreFailed:
                    pass  # reconnects on the next look
                # Counted where noticed (as on SQLite), so a change another operation
                # caught up with first is not missed here; other engines' log rows
                # alone count too (a live log view shows them).
                if tx.reloads + tx.catchups + tx.log_noticed != seen:
                    seen = tx.reloads + tx.catchups + tx.log_noticed
                    tx.revision += 1
                    yield tx.revision
                try:
                    await asyncio.wait_for(wake.wait(), timeout=interval)
                except TimeoutError:
                    pass
                wake.clear()
        finally:
            stop.set()

    def missing_tables(self) -> list[str]:
        """Tables the store's migrations made that someone removed since, sorted
        (`engine.store.pg.schema.missing_tables`)."""
        return missing_tables(self.link.conn)

    def verify_log(self) -> Verification:
        """Check the arrow log's chain, this machine's anchor of it, and the consent history.

        Tables the store's migrations made and someone removed since are the
        finding, before anything reads them (`engine.store.pg.schema.missing_tables`).

        Raises:
            StoreFailed: the store cannot be read (reason ``connection``: a connection
                lost since its last use is made again by the next).
        """
        try:
            missing = missing_tables(self.link.conn)
            if missing:
                return missing_finding(missing)
            if self.tx.anchor is not None:
                self.tx.anchor.flush()  # what this engine committed is on file first
            return self.log.verify(self.history, self.anchor)
        except psycopg.Error as exc:
            self.link.abandon()
            raise StoreFailed(f"cannot verify the log of the PostgreSQL store "
                              f"{redact(self.link.dsn)}: {exc}", reason="connection") from exc

    # ------------------------------------------------------------- helpers
    def _exec(self, table: str, sql: str, params: list[Any],
              touched: tuple[str, str] | None = None) -> psycopg.Cursor[Any]:
        self.tx.dirty.add(table)
        if touched is not None:
            self.tx.touch(*touched)
        return self.link.conn.execute(sql, params)

    # ------------------------------------------------------ rate windows
    def count_rate_event(self, card: str, key: str, t: float) -> None:
        """Record an accepted call in ``card``'s window ``key`` at ``t``."""
        self._exec("rate_events", "insert into rate_events (card, key, t) values (%s, %s, %s)",
                   [card, key, t])
        self.tx.touch("rate", card, key, t)

    def forget_rate_events(self, card: str) -> None:
        """Drop every rate event of a removed card."""
        self._exec("rate_events", "delete from rate_events where card = %s", [card],
                   ("rates", card))

    def move_rate_events(self, card: str, heir: str) -> None:
        """Count a removed spawn root's rate events as its heir's (the new root)."""
        # ``rates``: other engines read the windows again.
        self._exec("rate_events", "update rate_events set card = %s where card = %s",
                   [heir, card], ("rates", card))

    # ------------------------------------------- pending suppressed summaries
    # Written on the store's connection without `_exec`: the table is no state a
    # decision reads, so replacing or deleting a summary records no change. Only
    # a summary's creation does (`save_pending_summary`): the other engines learn
    # the key at their catch-up, and write its ``suppressed`` row before that
    # card's next row (SPEC §8 "Bounds", §10).
    def pending_summary(self, key: str | None) -> Suppressed | None:
        """The pending summary of budget ``key``, or None.

        Raises:
            StoreFailed: the store cannot be read (as `load`: the batch is lost with it).
        """
        try:
            row = self.link.conn.execute(_READ_PENDING + " where key = %s",
                                         [row_key(key)]).fetchone()
        except psycopg.Error as exc:
            self.link.abandon()
            raise StoreFailed(f"cannot read the PostgreSQL store: {one_line(str(exc))}",
                              reason="connection") from exc
        return None if row is None else summary_of(*row)[1]

    def save_pending_summary(self, key: str | None, held: Suppressed) -> None:
        """Insert or replace the pending summary of budget ``key``; its creation is a
        change (``pending``, its stored key) the other engines catch up on."""
        stored = row_key(key)
        row = self.link.conn.execute(_SAVE_PENDING, (stored, encode(held))).fetchone()
        if row is not None and row[0]:
            self.tx.dirty.add("suppressed_pending")
            self.tx.touch("pending", stored)

    def drop_pending_summary(self, key: str | None) -> None:
        """Delete the pending summary of budget ``key``."""
        self.link.conn.execute("delete from suppressed_pending where key = %s", [row_key(key)])

    # ---------------------------------------------------- terminal drivers
    def terminal_driver(self, node: str) -> TerminalClaim | None:
        """The claim of the engine that drives terminal ``node``, or None; whether its
        lease ran out is judged by the server's clock, which every engine shares.

        Raises:
            StoreFailed: the store cannot be read (as `load`: the batch is lost with it).
        """
        try:
            row = self.link.conn.execute(
                f"select engine, process, expires <= {_NOW} from terminal_drivers"
                " where node = %s", [node]).fetchone()
        except psycopg.Error as exc:
            self.link.abandon()
            raise StoreFailed(f"cannot read the PostgreSQL store: {one_line(str(exc))}",
                              reason="connection") from exc
        if row is None:
            return None
        return TerminalClaim.read(row)

    def claim_terminal(self, node: str, claim: TerminalClaim, t: float, lease: float) -> None:
        """Record that ``claim``'s engine drives terminal ``node`` from ``t``, its lease
        running ``lease`` seconds from now by the server's clock."""
        self._exec("terminal_drivers",
                   "insert into terminal_drivers (node, engine, process, since, expires)"
                   f" values (%s, %s, %s, %s, {_NOW} + %s) on conflict (node) do update set"
                   " engine = excluded.engine, process = excluded.process,"
                   " since = excluded.since, expires = excluded.expires",
                   [node, claim.engine, claim.process, t, lease])

    def renew_terminals(self, engine: str, lease: float) -> set[str]:
        """Renew every claim of ``engine`` for ``lease`` seconds; the terminals it claims.

        On no change feed (no table marked changed): no engine's state reads a
        lease, and a change recorded every few seconds would wake every other
        engine's catch-up for nothing."""
        rows = self.link.conn.execute(f"update terminal_drivers set expires = {_NOW}"
                                      " + %s where engine = %s returning node", [lease, engine])
        return {str(r[0]) for r in rows.fetchall()}

    def drop_own_claim(self, node: str, engine: str) -> None:
        """Delete terminal ``node``'s claim if it is ``engine``'s."""
        self._exec("terminal_drivers", "delete from terminal_drivers where node = %s"
                   " and engine = %s", [node, engine])

    def drop_terminal_claim(self, node: str) -> None:
        """Delete terminal ``node``'s claim."""
        self._exec("terminal_drivers", "delete from terminal_drivers where node = %s", [node])

    def release_terminals(self, engine: str) -> None:
        """Delete every claim of ``engine``."""
        self._exec("terminal_drivers", "delete from terminal_drivers where engine = %s", [engine])

    # ------------------------------------------------------- prompt budgets
    def budget_bucket(self, workspace: str) -> Bucket:
        """The prompt bucket of ``workspace``: read once a batch (under the store's
        write lock), the same object for the rest of it.

        Raises:
            StoreFailed: the store cannot be read (as `load`: the batch is lost with it).
        """
        batch = self.tx.batch
        known = self._buckets.of(batch) if batch is not None else None
        if known is not None and (bucket := known.get(workspace)) is not None:
            return bucket
        try:
            row = self.link.conn.execute(_READ_BUCKET, [workspace]).fetchone()
        except psycopg.Error as exc:
            self.link.abandon()
            raise StoreFailed(f"cannot read the PostgreSQL store: {one_line(str(exc))}",
                              reason="connection") from exc
        bucket = Bucket() if row is None else bucket_of(*row)
        if known is not None:
            known[workspace] = bucket
        return bucket

    def save_budget_bucket(self, workspace: str, bucket: Bucket) -> None:
        """Keep ``bucket`` as ``workspace``'s: inside a batch it is written once, just
        before the commit, as it then stands (`_write_buckets`); outside one at once."""
        batch = self.tx.batch
        if batch is None:
            self.link.conn.execute(_SAVE_BUCKET, (workspace, bucket.level, bucket.at))
            return
        self._changed_buckets.of(batch)[workspace] = bucket

    def _write_buckets(self, conn: psycopg.Connection[Any], batch: Batch) -> None:
        """Before ``batch``'s COMMIT: the buckets it changed, one upsert each (a batch
        that failed before its commit left its own, which are dropped unwritten).

        Not a change other engines catch up on: no decision reads a bucket, and each
        engine reads it under the write lock when it delivers.
        """
        changed = self._changed_buckets.of(batch)
        self._changed_buckets.of(None)
        for workspace, bucket in changed.items():
            conn.execute(_SAVE_BUCKET, (workspace, bucket.level, bucket.at))

    # ------------------------------------------------------------ prompts
    def next_prompt_position(self) -> int:
        """The position the next prompt takes (under the write lock: unique)."""
        row = self.link.conn.execute("select coalesce(max(position), 0) + 1 from prompts"
                                     ).fetchone()
        assert row is not None
        return int(row[0])

    def save_prompt(self, prompt: Prompt) -> None:
        """Insert or replace a prompt as it now stands."""
        row = prompt.to_row()
        cols = list(row)
        self._exec("prompts", _upsert("prompts", "id", cols), [row[c] for c in cols],
                   ("prompt", prompt.id))

    def prompt(self, prompt_id: str) -> Prompt | None:
        """A prompt by id as its row stands (this engine's open batch included), or None."""
        rows = list(Reader(self.link.conn).query(promptrows.BY_ID, [prompt_id]))
        return Prompt.from_row(rows[0]) if rows else None

    def prompts(self, *, state: str | None = None, arrow: str | None = None,
                newest: int | None = None) -> list[Prompt]:
        """Stored prompts in ``state`` on ``arrow`` (None: any), in order of arrival;
        only the ``newest`` of them when given."""
        sql, params = promptrows.listing(state, arrow, newest)
        return [Prompt.from_row(row) for row in Reader(self.link.conn).query(sql, params)]

    # --------------------------------------------------------- tool calls
    def next_tool_call_position(self) -> int:
        """The position the next tool call takes (under the write lock: unique)."""
        row = self.link.conn.execute("select coalesce(max(position), 0) + 1 from tool_calls"
                                     ).fetchone()
        assert row is not None
        return int(row[0])

    def save_tool_call(self, tc: ToolCall) -> None:
        """Insert or replace a tool call as it now stands."""
        row = tc.to_row()
        cols = list(row)
        self._exec("tool_calls", _upsert("tool_calls", "id", cols), [row[c] for c in cols],
                   ("tool_call", tc.id))

    def tool_call(self, call_id: str) -> ToolCall | None:
        """A tool call by id, open or resolved, or None."""
        cur = self.link.conn.cursor(row_factory=dict_row)
        row = cur.execute("select * from tool_calls where id = %s", [call_id]).fetchone()
        return None if row is None else ToolCall.from_row(row)

    # -------------------------------------------------- packages, grants
    def save_package(self, pkg: PackageState) -> None:
        """Insert or replace a package: its state, manifests and digests."""
        cols = ["name", "state", "manifest", "digests", "hash", "pending_manifest",
                "pending_digests", "pending_hash"]
        self._exec("packages", _upsert("packages", "name", cols), [
            pkg.name, "installed" if pkg.installed else "available", json.dumps(pkg.raw),
            json.dumps(pkg.digests), pkg.hash,
            json.dumps(pkg.pending_raw) if pkg.pending_raw is not None else None,
            json.dumps(pkg.pending_digests) if pkg.pending_digests is not None else None,
            pkg.pending_hash], ("package", pkg.name))

    def delete_package(self, name: str) -> None:
        """Remove an offered package (never one with grants: the service checks)."""
        self._exec("packages", "delete from packages where name = %s", [name],
                   ("package", name))

    def set_grants(self, package: str, permissions: Iterable[str], *, t: float,
                   by: str) -> None:
        """Make the package's granted permissions exactly ``permissions``."""
        self._exec("grants", "delete from grants where package = %s", [package],
                   ("grants", package))
        rows = [[package, perm, t, by] for perm in permissions]
        if rows:
            with self.link.conn.cursor() as cur:
                cur.executemany('insert into grants (package, permission, t, "by")'
                                " values (%s, %s, %s, %s)", rows)

    # -------------------------------------------------------------- usage
    def save_usage(self, workspace: str, tokens: int, cost: float) -> None:
        """Set a workspace's token usage and cost totals."""
        self._exec("usage", _upsert("usage", "workspace", ["workspace", "tokens", "cost"]),
                   [workspace, tokens, cost], ("usage", workspace))

    # ------------------------------------------------------------- canvas
    def save_workspace(self, ws: Workspace) -> None:
        """Insert or replace a workspace."""
        self._exec("workspaces", _upsert("workspaces", "id", ["id", "folder", "settings"]),
                   [ws.id, ws.folder, json.dumps(ws.settings.to_dict())], ("workspace", ws.id))

    def save_node(self, node: Node) -> None:
        """Insert a node (after every other) or replace its data in place."""
        self._exec("nodes",
                   "insert into nodes (id, workspace, type, data, position) values"
                   " (%s, %s, %s, %s, (select coalesce(max(position), 0) + 1 from nodes))"
                   " on conflict (id) do update set data = excluded.data",
                   [node.id, node.workspace, node.type, json.dumps(node.data, sort_keys=True)],
                   ("node", node.id))

    def update_node(self, node: Node) -> None:
        """Replace the data of a node the store holds: `save_node`."""
        self.save_node(node)

    def delete_node(self, node_id: str) -> None:
        """Delete a node, its arrows and its terminal claim."""
        gone = self._exec("arrows", "delete from arrows where src = %s or dst = %s returning id",
                          [node_id, node_id]).fetchall()
        for (arrow_id,) in gone:
            self.tx.touch("arrow", arrow_id)
        self._exec("nodes", "delete from nodes where id = %s", [node_id], ("node", node_id))
        self._exec("terminal_drivers", "delete from terminal_drivers where node = %s", [node_id])

    def revoke_tokens(self, principal: str, t: float) -> None:
        """Revoke every live service token of ``principal`` (its node is removed): each
        is named on the batch's change, for the other servers' token caches."""
        revoked = self._exec("service_tokens", "update service_tokens set revoked = %s "
                             "where principal = %s and revoked is null returning id",
                             [t, principal]).fetchall()
        for (token_id,) in revoked:
            self.tx.touch("token", str(token_id))

    def save_arrow(self, arrow: Arrow) -> None:
        """Insert an arrow."""
        self._exec("arrows",
                   "insert into arrows (id, workspace, src, dst, from_port, to_port)"
                   " values (%s, %s, %s, %s, %s, %s)",
                   [arrow.id, arrow.workspace, arrow.src, arrow.dst, arrow.from_port,
                    arrow.to_port], ("arrow", arrow.id))

    def delete_arrow(self, arrow_id: str) -> None:
        """Delete an arrow."""
        self._exec("arrows", "delete from arrows where id = %s", [arrow_id], ("arrow", arrow_id))

    # --------------------------------------------------------------- meta
    def set_meta(self, key: str, value: str) -> None:
        """Insert or replace a value of the ``meta`` table."""
        self._exec("meta", _upsert("meta", "key", ["key", "value"]), [key, value])

    def meta(self, key: str) -> str | None:
        """A value of the ``meta`` table, or None."""
        row = self.link.conn.execute("select value from meta where key = %s", [key]).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------- tokens
    def tokens(self) -> PGTokens:
        """The service's token table, on a connection pool of its own."""
        return PGTokens(self.link)


def create_schema(dsn: str, prefix: str = "arrowgate_scratch") -> str:
    """Create a new, empty schema on ``dsn`` for a store of its own; returns its name.

    `arrowgate replay --store URL` plays each case in one, so that cases
    never see each other's state on a shared database (`drop_schema` after).

    Raises:
        StoreFailed: the server cannot be reached or refuses.
    """
    import secrets

    from psycopg import sql

    name = f"{prefix}_{secrets.token_hex(8)}"
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql.SQL("create schema {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        raise StoreFailed(f"cannot make a schema on {redact(dsn)}: {one_line(str(exc))}",
                          reason="connection") from exc
    return name


def drop_schema(dsn: str, name: str) -> None:
    """Drop a schema `create_schema` made, with everything in it.

    Raises:
        StoreFailed: the server cannot be reached or refuses.
    """
    from psycopg import sql

    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql.SQL("drop schema if exists {} cascade").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        raise StoreFailed(f"cannot drop schema {name} on {redact(dsn)}: "
                          f"{one_line(str(exc))}",
                          reason="connection") from exc


def _has_store(conn: Any) -> bool:
    """Whether an engine made its store in ``conn``'s database (it records migrations);
    read in a transaction of its own, ended (`migrate` runs its own after it).

    Raises:
        StoreFailed: the store's tables stand without their ledger (`refuse_lost_ledger`):
            a store, but one that cannot be read as the engine left it.
    """
    with conn.transaction():
        refuse_lost_ledger(conn)
        return bool(applied(conn))
