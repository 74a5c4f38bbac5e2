"""The embedded store: one SQLite file (WAL, full sync) with group commit.

`SQLiteStore` implements `engine.store.base.Store` from the store's pieces:
`Transactions` (group commit, savepoints, catching up with other processes),
`ArrowLog` with its `AnchorFile`, `ConsentHistory`, `SecretVault`, the canvas
tables (`CanvasStore`), and the statements of the other tables, which are
here and nowhere else.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from canvas.model import Arrow, Node, Workspace
from engine.core.budget import Bucket
from engine.core.events import Event
from engine.core.limits import SteadyClock, Suppressed
from engine.core.prompts import PROMPT_COLUMNS, Prompt
from engine.core.state import PackageState, State
from engine.core.tools import TOOL_CALL_COLUMNS, ToolCall
from engine.store import promptrows
from engine.store.anchor import AnchorFile
from engine.store.base import Refresh, TerminalClaim
from engine.store.buckets import BatchBuckets, bucket_of
from engine.store.canvas import CanvasStore
from engine.store.database import (
    BUSY_TIMEOUT_S,
    database_file,
    open_database,
    write_transaction,
)
from engine.store.encoding import dumps, dumps_sorted
from engine.store.front import BatchFront
from engine.store.history import ConsentHistory
from engine.store.loading import (
    MAX_CATCH_UP,
    CatchUpImpossible,
    Touched,
    catch_up,
    load_state,
    newest_time,
)
from engine.store.log import ArrowLog, Verification, refuse_missing, verify_anchored
from engine.store.logkeys import keys_ahead, repair_keys
from engine.store.migrations import migrations
from engine.store.openfiles import DatabaseFiles
from engine.store.pending import encode, row_key, summary_of
from engine.store.siblings import siblings_of
from engine.store.tokenfeed import TokenFeed
from engine.store.tokens import SQLiteTokens
from engine.store.transactions import Batch, Transactions
from engine.store.vault import SecretVault
from engine.store.writelock import TRY_LOCK_S, LockWait

__all__ = ["SQLiteStore"]

#: The machine's clock in SQL (seconds since the epoch), that terminal claims' leases
#: are judged by: one machine shares the file, so one clock (`engine.services.claims`).
_NOW = "((julianday('now') - 2440587.5) * 86400.0)"


def _not_bound(*_args: Any) -> None:
    raise RuntimeError("the store is not bound to an engine yet (Store.bind)")


def _upsert(table: str, cols: list[str]) -> str:
    return (f"insert or replace into {table} ({', '.join(cols)}) values"
            f" ({', '.join('?' for _ in cols)})")


def _bind_none_plainly() -> None:
    """Bind None without sqlite3's failed protocol look-up, once a process.

    sqlite3 binds int, float and str at once, but sends every other value —
    None too — through its adapter registry, and with no adapter there it
    asks its protocol type for ``__adapt__``: an AttributeError built and
    thrown away for every NULL bound (about a thousand machine instructions;
    an accepted prompt binds some fifteen). An adapter for None that gives
    None back is found in the registry first; sqlite3 then binds NULL as
    before, so what is stored does not change. One the application
    registered itself is left alone.
    """
    if (type(None), sqlite3.PrepareProtocol) not in sqlite3.adapters:
        # A C function of one argument that returns None: an empty dict's
        # `get` (the dict is this one's own and never holds a key).
        none: dict[object, None] = {}
        sqlite3.register_adapter(type(None), none.get)


_bind_none_plainly()

#: `SQLiteStore.save_prompt`'s statement, its values in the order of `Prompt.to_values`.
_SAVE_PROMPT = _upsert("prompts", list(PROMPT_COLUMNS))
#: ... for a prompt the store numbered and has not written yet: ``or fail`` (no row
#: can be there to replace) needs no statement journal (see `_COUNT_RATE_EVENT`).
_NEW_PROMPT = _SAVE_PROMPT.replace("insert or replace", "insert or fail", 1)
#: `SQLiteStore.save_tool_call`'s statement, its values in the order of `ToolCall.to_values`.
_SAVE_TOOL_CALL = _upsert("tool_calls", list(TOOL_CALL_COLUMNS))
# The statements rows are left to the commit with say ``or fail``: the default
# ``abort`` makes SQLite open a statement journal for every row a trigger writes
# a change row for (copying each page the statement changes, to undo the
# statement alone), about a third of such a row's cost. Their constraints
# fail before anything of the row is written, as with ``abort``; the trigger's
# change row takes the outer statement's policy; and what fails at the commit
# fails the whole batch whatever the statement left (`Transactions.flush`).
#: `SQLiteStore.count_rate_event`'s statement.
_COUNT_RATE_EVENT = "insert or fail into rate_events (card, key, t) values (?, ?, ?)"
class _Summary:
    """A pending summary bound as it stands when its row is written, not when it was
    left to the commit (`SQLiteStore.save_pending_summary`): sqlite3 adapts it."""

    __slots__ = ("held",)

    def __init__(self, held: Suppressed) -> None:
        self.held = held

    def text(self) -> str:
        """The ``summary`` column (`engine.store.pending.encode`)."""
        return encode(self.held)


sqlite3.register_adapter(_Summary, _Summary.text)

#: `SQLiteStore.save_pending_summary`'s statement (a replace: the summary is read under
#: the write lock and merged in memory first, `engine.services.record.Recorder`).
_SAVE_PENDING = _upsert("suppressed_pending", ["key", "summary"])
class _Level:
    """A bucket's level, bound as it stands when its row is written (`SQLiteStore.save_budget_bucket`)."""

    __slots__ = ("bucket",)

    def __init__(self, bucket: Bucket) -> None:
        self.bucket = bucket


class _At:
    """A bucket's time, bound as it stands when its row is written (`SQLiteStore.save_budget_bucket`)."""

    __slots__ = ("bucket",)

    def __init__(self, bucket: Bucket) -> None:
        self.bucket = bucket


sqlite3.register_adapter(_Level, lambda value: value.bucket.level)
sqlite3.register_adapter(_At, lambda value: value.bucket.at)

#: `SQLiteStore.save_budget_bucket`'s statement.
_SAVE_BUCKET = _upsert("prompt_budget", ["workspace", "level", "at"])
#: `SQLiteStore.budget_bucket`'s statement.
_READ_BUCKET = "select level, at from prompt_budget where workspace = ?"
#: `SQLiteStore.drop_pending_summary`'s statement.
_DROP_PENDING = "delete from suppressed_pending where key = ?"
#: The statement reading pending summaries (with ``where``: one key's).
_READ_PENDING = "select key, summary from suppressed_pending"
#: `SQLiteStore.update_node`'s statement.
_UPDATE_NODE = "update or fail nodes set data = ? where id = ?"
#: What a tool call's resolution changes in its row (`SQLiteStore.save_tool_call`).
_RESOLVE_TOOL_CALL = ("update tool_calls set state = ?, result = ?, code = ?, reason = ?,"
                      " message = ?, ended = ? where id = ?")


class SQLiteStore(BatchFront):
    """The `Store` on one SQLite database; opening it brings the schema up to date.

    Args:
        db: the app database (see `open_database`); `open` opens one by path.
    """

    tx: Transactions  #: its batches (`BatchFront` passes the batch operations through)

    def __init__(self, db: Database) -> None:
        self._file = database_file(db)
        #: The anchor beside the database file (none for an in-memory database).
        self.anchor = AnchorFile(self._file + ".anchor") if self._file else None
        if self.anchor is not None:
            # A newer engine's anchor is refused before anything is written, as a
            # newer engine's step in the ledger is (`migrations.apply`).
            self.anchor.refuse_newer()
        migrations.apply(db)
        # A table the migrations made and someone dropped since: the engine would
        # decide without it, or break at the first write that needs it.
        refuse_missing(migrations.missing_tables(db))
        if keys_ahead(db.conn):
            with write_transaction(db):
                repair_keys(db.conn)
        self.db = db
        #: The arrow log (`engine.store.base.Log`).
        self.log = ArrowLog(db)
        #: The consent history (`engine.store.base.History`).
        self.history = ConsentHistory(db)
        #: The operator's secrets (`engine.store.base.Secrets`).
        self.secrets = SecretVault(db)
        #: The workspaces, nodes and arrows tables.
        self.canvas = CanvasStore(db)
        #: One cursor for the statements every accepted prompt writes (its rate
        #: event and its row): ``conn.execute`` makes a cursor and drops it again
        #: for each statement, a third of such a statement's cost in Python.
        self._writes = db.conn.cursor()
        self._reload: Callable[[bool], None] = _not_bound
        #: The highest prompt position in the table, while the batch it was read in lasts.
        self._last_position: tuple[Batch | None, int] | None = None
        #: Positions handed out (`next_prompt_position`) whose prompt was not written yet.
        self._numbered: set[int] = set()
        #: The pending summary each budget key's row left to the commit binds, and that
        #: row's number (`save_pending_summary`; `DeferredRows.waits` tells if it waits).
        self._summaries: dict[str | None, _Summary] = {}
        self._summary_rows: dict[str | None, int] = {}
        #: The prompt buckets the open batch read (`budget_bucket`), and the row each
        #: workspace's bucket left to the commit, with the value it ends with.
        self._buckets = BatchBuckets()
        self._bucket_rows: dict[str, tuple[int, _At]] = {}
        self._committed: Callable[[list[Event]], None] = _not_bound
        self._refresh: Callable[[Refresh], None] | None = None
        #: Group commit, savepoints and catching up (the store's `write`, `flush`, `sync`).
        self.tx = Transactions(db, self.log, self.anchor, history=self.history,
                               reload=lambda elsewhere: self._reload(elsewhere),
                               committed=lambda events: self._committed(events),
                               catch_up=self._catch_up, unchanged=self._leases_only)
        #: Where the change feed, the log and the consent history ended at the last
        #: look at other connections' commits (`_leases_only`).
        self._ends: tuple[object, ...] | None = None
        self._ends_read: tuple[object, ...] | None = None
        #: Service tokens revoked by other connections, as `_catch_up` reads them.
        self.token_feed = TokenFeed()
        #: See `history_edits`.
        self._history_edits = 0
        #: Reload the state when another connection committed (`Transactions.sync`:
        #: every operation's prologue, so the store's own frame is left out).
        self.sync: Callable[[], None] = self.tx.sync
        #: An operation whose one write is a log row of a known kind
        #: (`Transactions.append_alone`): a refused call's, most of all.
        self.append_alone = self.tx.append_alone
        if self._file:
            # The write lock another program holds is waited for in short tries, the
            # loop free between them, up to the busy timeout the file was opened with
            # (its migrations waited that long at once): `engine.store.writelock`.
            bound = int(db.conn.execute("PRAGMA busy_timeout").fetchone()[0]) / 1000
            self.tx.lock = LockWait(self._file, bound)
            db.conn.execute(f"PRAGMA busy_timeout = {int(min(TRY_LOCK_S, bound) * 1000)}")
            # Other stores of this process on the file make way for this one's
            # writes, and this one for theirs (`engine.store.siblings`).
            self.tx.siblings = siblings_of(self._file)
            self.tx.siblings.join(self.tx)
            self.tx.files = DatabaseFiles(self._file)

    @classmethod
    def open(cls, path: str | Path | None, *,
             busy_timeout: float = BUSY_TIMEOUT_S) -> SQLiteStore:
        """Open (creating if needed) the store on a database file (None: in memory).

        Raises:
            sqlite3.DatabaseError: the file is not a database, or cannot be read
                (`engine.Engine.open` reports it as ``STORE_FAILED``).
        """
        db = open_database(path, busy_timeout=busy_timeout)
        try:
            return cls(db)
        except BaseException:
            db.close()  # refused (a newer schema, a missing table): nothing stays open
            raise

    # ------------------------------------------------------------ lifecycle
    @property
    def file(self) -> str | None:
        """The database file, or None for an in-memory database."""
        return self._file

    @property
    def rows_at_commit(self) -> bool:
        """True: rate events, prompt rows and node data written inside an operation are
        left to the commit (`DeferredRows`)."""
        return True

    @property
    def log_rows_at_commit(self) -> bool:
        """True: log rows are inserted by the commit (`ArrowLog.write_pending`)."""
        return True

    def bind(self, *, reload: Callable[[bool], None],
             committed: Callable[[list[Event]], None],
             refresh: Callable[[Refresh], None] | None = None) -> None:
        """The engine's hooks (see `engine.store.base.Store.bind`)."""
        self._reload, self._committed, self._refresh = reload, committed, refresh

    def load(self, clock: SteadyClock) -> State:
        """The state as the store holds it now (and the secrets and log tail read afresh).

        Read in one snapshot (the open batch's, or a read transaction of its
        own), together with the newest change it includes (`Transactions.seen`).
        """
        # The rows earlier operations of the open batch left to the commit are
        # part of the state: written first (with no transaction, they are gone).
        self.tx.write_deferred()
        self.log.forget_tail()  # a rollback may have taken the newest rows away
        self._last_position = None  # and the newest prompts
        self._numbered.clear()
        conn = self.db.conn
        own = not conn.in_transaction
        if own:
            # Before the snapshot: a commit after this moves it again, and the
            # catch-up then finds whatever the snapshot did not include.
            self.tx.sync_version()
            conn.execute("BEGIN")
        try:
            seen = conn.execute("select coalesce(max(seq), 0) from changes").fetchone()[0]
            self.secrets.reload()
            # Last: it pauses the collector while it builds the state, and nothing
            # allocated after it should set off a full collection of that state here.
            state = load_state(self.db, self.canvas, clock)
        finally:
            if own and conn.in_transaction:
                conn.execute("COMMIT")
        self.tx.seen = int(seen)
        return state

    def _leases_only(self) -> bool:
        """Whether other connections' commits since the last look wrote nothing but
        what no state and no live view here reads: terminal claims, their leases.

        A renewal is a commit every few seconds (`engine.services.claims`), and
        ``data_version`` moves with it as with any other; caught up with, it
        would wake every live view on the file (`Transactions.changes`). The
        tables a state or a view reads record each write in the change feed
        (triggers, `migrations.m010_changes`), in the log or in the consent
        history, each keyed by a growing ``seq``: when none of the three ends
        further than at the last look, nothing was written there (an old row of
        the log or the history edited or deleted by hand moves no end of its own:
        its triggers feed it, `migrations.m023_history_edits_fed`). The ends are
        read before the catch-up that follows a look that finds them moved, so
        they are never ahead of what was applied; this connection's own commits
        move them too, and the next look then catches up as before (never
        skipping a change, at worst one catch-up of nothing).
        """
        ends = tuple(self.db.conn.execute(
            "select (select max(seq) from changes), (select max(seq) from log),"
            " (select max(seq) from consent)").fetchone())
        if ends == self._ends:
            return True
        # Taken as seen once the catch-up that follows has applied what is behind them.
        self._ends_read = ends
        return False

    def _catch_up(self) -> bool:
        """`_apply_changes`; once it succeeded, the ends `_leases_only` read before it
        are where this connection is (a catch-up the store fails is made again at the
        next look, never skipped as a renewal)."""
        changed = self._apply_changes()
        self._ends = self._ends_read
        return changed

    def _apply_changes(self) -> bool:
        """Apply the changes other connections committed since `Transactions.seen`.

        Reads them and the rows they touched in one snapshot; when they
        cannot be applied one by one (too many, pruned, unknown, or the
        engine gave no ``refresh`` hook), reloads the whole state instead.
        Returns True when the state changed.
        """
        conn = self.db.conn
        own = not conn.in_transaction
        if own:
            conn.execute("BEGIN")
        try:
            seen = self.tx.seen
            rows = conn.execute("select seq, kind, key, key2, t from changes where seq > ?"
                                " order by seq limit ?", [seen, MAX_CATCH_UP + 1]).fetchall()
            refresh = self._refresh
            if not rows:
                newest = conn.execute("select coalesce(max(seq), 0) from changes").fetchone()[0]
                if newest < seen:
                    # The feed was cut back by hand (the engine prunes only its oldest
                    # rows): the next changes take numbers already seen. Read the store
                    # whole, which sees the newest number as it is.
                    self.tx.full_reload()
                    self.token_feed.changed(None)  # which tokens changed is not known
                    return True
                # Log rows only: nothing a decision reads, but time never goes
                # back behind the newest one (SPEC §6).
                if refresh is not None:
                    refresh(lambda _state, clock, _moves: clock.at_least(newest_time(self.db)))
                return False
            touched = Touched()
            try:
                if refresh is None or rows[0][0] != seen + 1 or len(rows) > MAX_CATCH_UP:
                    raise CatchUpImpossible("behind by more than the changes kept")
                for seq, kind, key, key2, t in rows:
                    touched.add(kind, key, key2, t, (int(seq), 0))
                if touched.secrets:
                    self.secrets.reload()
                refresh(lambda state, clock, moves: catch_up(self.db, state, clock, touched, moves))
            except CatchUpImpossible:
                self.tx.full_reload()
                self.token_feed.changed(None)  # which tokens changed is not known
                return True
            if touched.tokens:
                self.token_feed.changed(touched.tokens)
            if "consent" in touched.records:
                self._history_edits += 1
            self.tx.seen = int(rows[-1][0])
            self.tx.catchups += 1
            return True
        finally:
            if own and conn.in_transaction:
                conn.execute("COMMIT")

    def close(self) -> None:
        """Close the database connection (and the anchor file held open)."""
        self.tx.closed = True
        if self.tx.siblings is not None:
            self.tx.siblings.leave(self.tx)
        self.db.close()
        # The newest batch's "committed" record, if the loop never went idle.
        self.tx.settle_anchor()
        if self.anchor is not None:
            self.anchor.close()

    # --------------------------------------------------------- transactions
    def changes(self, interval: float = 0.1, *,
                check: Callable[[], None] | None = None) -> AsyncIterator[int]:
        """Yield the store's revision whenever another process commits a change
        (`Transactions.changes`: ``check`` is called before each look)."""
        return self.tx.changes(interval, check=check)

    def verify_log(self) -> Verification:
        """Check the arrow log's chain, its anchor, and the consent history."""
        return verify_anchored(self.log, self.anchor)

    # ------------------------------------------------------ rate windows
    def count_rate_event(self, card: str, key: str, t: float) -> None:
        """Record an accepted call in ``card``'s window ``key`` at ``t``.

        Inside an operation the row is left to the commit (`DeferredRows`).
        """
        self._write("rate_events", _COUNT_RATE_EVENT, (card, key, t))

    def forget_rate_events(self, card: str) -> None:
        """Drop every rate event of a removed card."""
        self.tx.write_deferred()  # after the card's events counted before
        self.db.conn.execute("delete from rate_events where card = ?", [card])

    def move_rate_events(self, card: str, heir: str) -> None:
        """Count a removed spawn root's rate events as its heir's (the new root)."""
        self.tx.write_deferred()  # after the card's events counted before
        # The update's trigger records the change: other processes read the
        # windows again.
        self.db.conn.execute("update rate_events set card = ? where card = ?", [heir, card])

    def _write(self, table: str, sql: str, params: tuple[Any, ...]) -> None:
        """Write a row: left to the commit inside an operation (its batch is open and
        will write it), at once outside one."""
        tx = self.tx
        if tx.depth and tx.batch is not None:
            tx.deferred.add(table, sql, params)
        else:
            self._writes.execute(sql, params)

    # ------------------------------------------- pending suppressed summaries
    def pending_summary(self, key: str | None) -> Suppressed | None:
        """The pending summary of budget ``key``, the rows left to the commit included."""
        self.tx.write_deferred()  # the summary as the batch's operations left it
        row = self.db.conn.execute(_READ_PENDING + " where key = ?", [row_key(key)]).fetchone()
        return None if row is None else summary_of(*row)[1]

    def save_pending_summary(self, key: str | None, held: Suppressed) -> None:
        """Replace the pending summary of budget ``key``: inside an operation, left to the
        commit, and written as ``held`` then stands.

        A flood of refusals counts into one summary: its row is left to the commit
        once, and saving the same ``held`` again while that row still waits adds
        nothing (no second row, no JSON until the commit). An operation that
        failed takes back the rows it added (`DeferredRows.back_to`), so a row is
        counted on only while an operation that stands left it. (A refusal counted
        into ``held`` by an operation that failed later stays counted: a refusal
        that was made, never one lost.)
        """
        tx = self.tx
        if not (tx.depth and tx.batch is not None):
            self._writes.execute(_SAVE_PENDING, (row_key(key), encode(held)))
            return
        waiting = self._summaries.get(key)
        deferred = tx.deferred
        if waiting is not None and waiting.held is held and deferred.waits(
                self._summary_rows[key], waiting):
            return
        live = self._summaries[key] = _Summary(held)
        self._summary_rows[key] = deferred.add("suppressed_pending", _SAVE_PENDING,
                                               (row_key(key), live))

    def drop_pending_summary(self, key: str | None) -> None:
        """Delete the pending summary of budget ``key`` (after its replacements left to
        the commit: the rows of one table go in in order)."""
        self._write("suppressed_pending", _DROP_PENDING, (row_key(key),))

    # ---------------------------------------------------- terminal drivers
    def terminal_driver(self, node: str) -> TerminalClaim | None:
        """The claim of the engine that drives terminal ``node``, or None."""
        row = self.db.conn.execute("select engine, process, expires <= " + _NOW +
                                   " from terminal_drivers where node = ?", [node]).fetchone()
        if row is None:
            return None
        return TerminalClaim.read(row)

    def claim_terminal(self, node: str, claim: TerminalClaim, t: float, lease: float) -> None:
        """Record that ``claim``'s engine drives terminal ``node`` from ``t``, its lease
        running ``lease`` seconds from now by this machine's clock."""
        self.db.conn.execute("insert or replace into terminal_drivers (node, engine, process,"
                             " since, expires) values (?, ?, ?, ?, " + _NOW + " + ?)",
                             [node, claim.engine, claim.process, t, lease])

    def renew_terminals(self, engine: str, lease: float) -> set[str]:
        """Renew every claim of ``engine`` for ``lease`` seconds; the terminals it claims."""
        rows = self.db.conn.execute("update terminal_drivers set expires = " + _NOW +
                                    " + ? where engine = ? returning node", [lease, engine])
        return {str(r[0]) for r in rows.fetchall()}

    def drop_own_claim(self, node: str, engine: str) -> None:
        """Delete terminal ``node``'s claim if it is ``engine``'s."""
        self.db.conn.execute("delete from terminal_drivers where node = ? and engine = ?",
                             [node, engine])

    def drop_terminal_claim(self, node: str) -> None:
        """Delete terminal ``node``'s claim."""
        self.db.conn.execute("delete from terminal_drivers where node = ?", [node])

    def release_terminals(self, engine: str) -> None:
        """Delete every claim of ``engine``."""
        self.db.conn.execute("delete from terminal_drivers where engine = ?", [engine])

    # ------------------------------------------------------- prompt budgets
    def budget_bucket(self, workspace: str) -> Bucket:
        """The prompt bucket of ``workspace``: read once a batch (under its write lock,
        ``BEGIN IMMEDIATE``), the same object for the rest of it."""
        batch = self.tx.batch
        known = self._buckets.of(batch) if batch is not None else None
        if known is not None and (bucket := known.get(workspace)) is not None:
            return bucket
        row = self.db.conn.execute(_READ_BUCKET, [workspace]).fetchone()
        bucket = Bucket() if row is None else bucket_of(*row)
        if known is not None:
            known[workspace] = bucket
        return bucket

    def save_budget_bucket(self, workspace: str, bucket: Bucket) -> None:
        """Keep ``bucket`` as ``workspace``'s: inside an operation its row is left to the
        commit once, and written with the level and time the bucket then has (an
        accepted prompt delivered at once writes no row of its own for it)."""
        tx = self.tx
        if not (tx.depth and tx.batch is not None):
            self._writes.execute(_SAVE_BUCKET, (workspace, bucket.level, bucket.at))
            return
        deferred = tx.deferred
        waiting = self._bucket_rows.get(workspace)
        if waiting is not None and waiting[1].bucket is bucket and deferred.waits(*waiting):
            return
        at = _At(bucket)
        self._bucket_rows[workspace] = (
            deferred.add("prompt_budget", _SAVE_BUCKET, (workspace, _Level(bucket), at)), at)

    # ------------------------------------------------------------ prompts
    def next_prompt_position(self) -> int:
        """The position the next prompt takes (read inside the write: unique)."""
        batch = self.tx.batch
        known = self._last_position
        if batch is not None and known is not None and known[0] is batch:
            # Read once a batch: nobody else can add a prompt while we hold
            # the write lock, and ours take the positions handed out here (and
            # `save_prompt` keeps it up to date); a rollback reloads, and
            # `load` forgets it.
            last = known[1]
        else:
            last = int(self.db.conn.execute(
                "select coalesce(max(position), 0) from prompts").fetchone()[0])
        # Counted as taken at once: no two prompts get one position, even if
        # the first is written after the second is numbered.
        self._last_position = (batch, last + 1) if batch is not None else None
        self._numbered.add(last + 1)
        return last + 1

    def save_prompt(self, prompt: Prompt) -> None:
        """Insert or replace a prompt as it now stands (its values taken now; inside an
        operation the row is left to the commit)."""
        numbered = self._numbered
        if prompt.position in numbered:
            numbered.discard(prompt.position)  # its first row: nothing to replace
            self._write("prompts", _NEW_PROMPT, prompt.to_values(dumps))
        else:
            self._write("prompts", _SAVE_PROMPT, prompt.to_values(dumps))
        known = self._last_position
        if known is not None and prompt.position > known[1]:
            self._last_position = (known[0], prompt.position)

    def prompt(self, prompt_id: str) -> Prompt | None:
        """A prompt by id as its row stands (this engine's writes included), or None."""
        self.tx.write_deferred()  # a row left to the commit is the newest
        rows = list(self.db.query(promptrows.BY_ID, [prompt_id]))
        return Prompt.from_row(rows[0]) if rows else None

    def prompts(self, *, state: str | None = None, arrow: str | None = None,
                newest: int | None = None) -> list[Prompt]:
        """Stored prompts in ``state`` on ``arrow`` (None: any), in order of arrival;
        only the ``newest`` of them when given."""
        self.tx.write_deferred()
        sql, params = promptrows.listing(state, arrow, newest)
        return [Prompt.from_row(row) for row in self.db.query(sql, params)]

    # --------------------------------------------------------- tool calls
    def next_tool_call_position(self) -> int:
        """The position the next tool call takes (read inside the write: unique)."""
        return int(self.db.conn.execute(
            "select coalesce(max(position), 0) + 1 from tool_calls").fetchone()[0])

    def save_tool_call(self, tc: ToolCall) -> None:
        """Insert or replace a tool call as it now stands."""
        if tc.state != "open":
            # A resolution changes only these columns of the open call's row:
            # updated in place, its other columns and the indexes on id and
            # position are left alone (a replace rewrote them all, and each
            # page it touched is one more written at the commit).
            done = self.db.conn.execute(_RESOLVE_TOOL_CALL, (
                tc.state, dumps(tc.result), tc.code, tc.reason, tc.message, tc.ended, tc.id))
            if done.rowcount == 1:
                return
        self.db.conn.execute(_SAVE_TOOL_CALL, tc.to_values(dumps))

    def tool_call(self, call_id: str) -> ToolCall | None:
        """A tool call by id, open or resolved, or None."""
        cur = self.db.conn.execute("select * from tool_calls where id = ?", [call_id])
        row = cur.fetchone()
        if row is None:
            return None
        cols = [d[0] for d in cur.description]
        return ToolCall.from_row(dict(zip(cols, row)))

    # -------------------------------------------------- packages, grants
    def save_package(self, pkg: PackageState) -> None:
        """Insert or replace a package: its state, manifests and digests."""
        self.db.conn.execute(
            "insert or replace into packages (name, state, manifest, digests, hash,"
            " pending_manifest, pending_digests, pending_hash) values (?, ?, ?, ?, ?, ?, ?, ?)",
            [pkg.name, "installed" if pkg.installed else "available", json.dumps(pkg.raw),
             json.dumps(pkg.digests), pkg.hash,
             json.dumps(pkg.pending_raw) if pkg.pending_raw is not None else None,
             json.dumps(pkg.pending_digests) if pkg.pending_digests is not None else None,
             pkg.pending_hash],
        )

    def delete_package(self, name: str) -> None:
        """Remove an offered package (never one with grants: the service checks)."""
        self.db.conn.execute("delete from packages where name = ?", [name])

    def set_grants(self, package: str, permissions: Iterable[str], *, t: float,
                   by: str) -> None:
        """Make the package's granted permissions exactly ``permissions`` (in that order)."""
        conn = self.db.conn
        conn.execute("delete from grants where package = ?", [package])
        for perm in permissions:
            conn.execute("insert into grants (package, permission, t, by) values (?, ?, ?, ?)",
                         [package, perm, t, by])

    # -------------------------------------------------------------- usage
    def save_usage(self, workspace: str, tokens: int, cost: float) -> None:
        """Set a workspace's token usage and cost totals."""
        self.db.conn.execute("insert or replace into usage (workspace, tokens, cost)"
                             " values (?, ?, ?)", [workspace, tokens, cost])

    # ------------------------------------------------------------- canvas
    def save_workspace(self, ws: Workspace) -> None:
        """Insert or replace a workspace."""
        self.canvas.save_workspace(ws)

    def save_node(self, node: Node) -> None:
        """Insert a node (after every other) or replace its data in place."""
        self.tx.write_deferred()  # after the data of nodes changed before
        self.canvas.save_node(node)

    def update_node(self, node: Node) -> None:
        """Replace the data of a node the store holds (inside an operation, left to the
        commit: a delivered prompt's agent)."""
        self._write("nodes", _UPDATE_NODE, (dumps_sorted(node.data), node.id))

    def delete_node(self, node_id: str) -> None:
        """Delete a node, its arrows and its terminal claim (a node added later under
        its id is driven by no one)."""
        self.tx.write_deferred()  # after the data of nodes changed before
        self.canvas.delete_node(node_id)
        self.db.conn.execute("delete from terminal_drivers where node = ?", [node_id])

    def revoke_tokens(self, principal: str, t: float) -> None:
        """Revoke every live service token of ``principal`` (its node is removed)."""
        self.db.conn.execute("update service_tokens set revoked = ? "
                             "where principal = ? and revoked is null", [t, principal])

    def save_arrow(self, arrow: Arrow) -> None:
        """Insert an arrow."""
        self.canvas.save_arrow(arrow)

    def delete_arrow(self, arrow_id: str) -> None:
        """Delete an arrow."""
        self.canvas.delete_arrow(arrow_id)

    # --------------------------------------------------------------- meta
    def set_meta(self, key: str, value: str) -> None:
        """Insert or replace a value of the ``meta`` table."""
        self.db.conn.execute("insert or replace into meta (key, value) values (?, ?)",
                             [key, value])

    def meta(self, key: str) -> str | None:
        """A value of the ``meta`` table, or None."""
        row = self.db.conn.execute("select value from meta where key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------- tokens
    def tokens(self) -> SQLiteTokens:
        """The service's token table, on connections of its own to the same file.

        Raises:
            ValueError: the store is in memory (no other connection can reach it).
        """
        if self._file is None:
            raise ValueError("an in-memory store has no file for the token table's connections")
        return SQLiteTokens(self._file)
