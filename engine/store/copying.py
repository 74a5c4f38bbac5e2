"""A whole store copied from a SQLite file into an empty PostgreSQL database
(``arrowgate copy``): the canvas, the consent given, the log and the consent history
with their hash chains, and every window, hold and queue as they stand.

``import``/``export`` carry a canvas's nodes and arrows only; a person who has used
arrowgate alone on the SQLite default and now shares the canvas on PostgreSQL (README
"A shared canvas on PostgreSQL") keeps the rest too: what was granted and reviewed,
what is held and queued, the tool calls, tokens, settings and the audit trail.

The way back, a PostgreSQL store into a new SQLite file, is `engine.store.copyback`,
with the same tables.

Which tables are copied is `COPIED`, one line each; every other table of either store
is per-store bookkeeping, named in `NOT_COPIED` with why (a test holds every table of
both schemas to be in one of the two, so a new table is one line here).

How it stays safe:

- the source is read only, and only when no other connection has the file open
  (`engine.store.fileholders.users`: an engine still serving it would go on writing
  there after the copy, and the two stores would part); it must be up to date (else
  `arrowgate upgrade` is named) and its log and consent history must verify against
  its anchor (a tampered log is never laundered into a fresh anchor);
- it is read in one read transaction, and checked again before the target commits:
  a source that moved meanwhile fails the copy;
- the target must hold no canvas: every copied table empty. It is written in one
  transaction under the store's write lock, so a failure, or Ctrl-C, halfway leaves
  it as it was; engines already open on it reload everything (a change of kind
  ``reload``);
- this machine's anchor of the target (README "Tamper evidence on PostgreSQL") is
  written at the copied log's newest row once the copy committed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import Connection, sql
from sqlite_utils import Database

from engine.core.errors import StoreFailed
from engine.store.anchor import Anchor, AnchorFile, AnchorState
from engine.store.database import connect_read_only
from engine.store.fileholders import program, users
from engine.store.log import ArrowLog, Verification, refuse_missing, verify_anchored
from engine.store.migrations import migrations
from engine.store.pg.anchoring import local_anchor
from engine.store.pg.changes import ENGINE_MARK, record_change
from engine.store.pg.locks import Lock, xact_lock
from engine.store.pg.parts import Link, redact
from engine.store.pg.schema import migrate, refuse_lost_ledger
from engine.store.view import OlderSchema

__all__ = ["COPIED", "NOT_COPIED", "Copied", "CopyReport", "chain_head", "copy_to_postgres",
           "deferred_interrupt", "refuse_unverified"]


@dataclass(frozen=True, slots=True)
class Copied:
    """A table that is state, copied whole: its name, the order its rows are read in
    (its key), and which rows are the source store's own bookkeeping, left behind."""

    name: str
    order: str
    #: An SQL condition on the rows left behind ("": none).
    skip: str = ""


#: Every table that is state. Its columns are the same in both stores (the PostgreSQL
#: schema is the SQLite one's, `engine.store.pg.schema`).
COPIED: tuple[Copied, ...] = (
    Copied("workspaces", "id"),
    Copied("nodes", "id"),  # spawned copies too: a copy's ``data`` names its root
    Copied("arrows", "id"),
    Copied("packages", "name"),  # manifests, file digests, review hashes, pending versions
    Copied("grants", "package, permission"),
    Copied("prompts", "id"),  # held, queued, delivered and finished
    Copied("tool_calls", "id"),
    # Every counted call, not only those inside a window now: which windows a card has
    # is the settings' to say, and a window the next call reads must be whole.
    Copied("rate_events", "id"),
    Copied("prompt_budget", "workspace"),  # each workspace's prompt bucket
    Copied("suppressed_pending", "key"),  # refusals counted, their summary row owed
    Copied("usage", "workspace"),
    Copied("secrets", "name"),
    Copied("service_tokens", "id"),  # their SHA-256 only, as stored
    Copied("log", "seq"),
    Copied("consent", "seq"),
    # A JSON Canvas import's extras (``jsoncanvas:<workspace>``); the SQLite file's own
    # bookkeeping of its log's side tables and its anchor is not the target's.
    Copied("meta", "key", "key in ('log_keyed', 'anchored')"),
)

#: The longest one round trip of the copy may wait for the server, in seconds.
COPY_S = 300.0

#: The tables of either store that are not copied, each with why.
NOT_COPIED: dict[str, str] = {
    "changes": "each store's feed of its own commits, for the engines open on it",
    "log_cards": "the SQLite file's index of its log by card (PostgreSQL indexes the log)",
    "log_arrows": "the SQLite file's index of its log by arrow (PostgreSQL indexes the log)",
    "terminal_drivers": "claims of engines driving terminals on the source: its engines' "
                        "own, and none may be open while it is copied",
    "_sqlite_migrations": "the SQLite file's migrations ledger",
    "schema_migrations": "the PostgreSQL store's migrations ledger",
}


@dataclass(slots=True)
class CopyReport:
    """What a copy did: rows per table, and the heads of the two chains copied."""

    source: str
    target: str  #: the target's URL, its password as ``***``
    tables: dict[str, int] = field(default_factory=dict)
    log: Anchor | None = None  #: the log's newest row (None: empty)
    history: Anchor | None = None  #: the consent history's newest entry (None: empty)
    #: The anchor written at ``log`` (this machine's of the target, or the new file's);
    #: "" when none was (no log row to vouch for).
    anchor: str = ""

    def to_json(self) -> dict[str, Any]:
        """The JSON form ``arrowgate copy --json`` prints."""

        def head(row: Anchor | None) -> dict[str, Any] | None:
            return None if row is None else {"seq": row.seq, "hash": row.hash}

        return {"from": self.source, "to": self.target, "tables": dict(self.tables),
                "log": head(self.log), "history": head(self.history), "anchor": self.anchor}


def copy_to_postgres(path: str | Path, dsn: str, *, anchors: Path | None = None,
                     schema: str | None = None) -> CopyReport:
    """Copy the SQLite store at ``path`` into the PostgreSQL database ``dsn``, whole.

    Args:
        path: the SQLite database file.
        dsn: a ``postgresql://`` URL of a database holding no canvas (no store yet,
            or a store whose tables are all empty).
        anchors: the folder of this machine's anchors (default
            `engine.store.pg.anchoring.anchor_folder`).
        schema: the target's schema (``search_path``); None for the default.

    Returns:
        The rows copied per table and the chains' heads.

    Raises:
        StoreFailed: reason ``in-use`` (another connection has the source open),
            ``older-schema`` (`OlderSchema`: ``arrowgate upgrade`` first),
            ``schema-mismatch`` or ``missing-table`` (as opening it would),
            ``unverified`` (its log or history fails `log verify`, naming the
            first bad row), ``not-copyable`` (a value PostgreSQL cannot hold),
            ``not-empty`` (the target holds a canvas), ``changed`` (the source
            moved while copied), ``connection`` (the server). Nothing is written
            to the target in any of these cases.
    """
    source = str(path)
    refuse_in_use(source)
    conn = connect_read_only(source)
    try:
        db = Database(conn)
        migrations.refuse_unknown(db)
        behind = migrations.behind(db)
        if behind:
            raise OlderSchema(source, behind)
        refuse_missing(migrations.missing_tables(db))
        verified = verify_anchored(ArrowLog(db), AnchorFile(source + ".anchor"))
        refuse_unverified(verified, f"{source}'s log")
        report = CopyReport(source, redact(dsn))
        watch = _Watch(source)
        try:
            conn.execute("begin")  # one read snapshot: every table as of one moment
            report.log, report.history = chain_head(conn, "log"), chain_head(conn, "consent")
            if (0 if report.log is None else report.log.seq) != verified.rows:
                watch.moved()  # it was written to after it was verified
            target = Link(dsn, schema=schema)
            try:
                _write(target, conn, report, anchors, watch.refuse_changed)
            finally:
                target.close()
        finally:
            watch.close()
        return report
    finally:
        conn.close()


def refuse_in_use(path: str, *, reading: bool = False) -> None:
    """Refuse a source another connection has open: an engine serving it would go on
    writing there after the copy. Where this cannot be told (no ``/proc/locks``), the
    source is watched for commits until the target commits instead (`_Watch`).

    Args:
        reading: the copy's own connection is open: this process's locks are its
            (another connection of this process was refused before it opened).

    Raises:
        StoreFailed: reason ``in-use``, naming the processes.
    """
    pids = [pid for pid in users(path) or [] if not (reading and pid == os.getpid())]
    if pids:
        named = "; ".join(program(pid) for pid in pids[:3])
        raise StoreFailed(f"{path} is open in another program ({named}): stop the engines, "
                          "services and viewers using it first (one still serving it would "
                          "go on writing there after the copy); nothing was copied",
                          reason="in-use")


def refuse_unverified(verified: Verification, what: str) -> None:
    """Refuse a source whose log or consent history fails `log verify` (``what``: its
    log, as the refusal names it): a copy would carry it under a fresh anchor.

    Raises:
        StoreFailed: reason ``unverified``, naming the first bad row.
    """
    if not verified.ok:
        where = f"first bad row {verified.first_bad}: " if verified.first_bad else ""
        raise StoreFailed(f"{what} does not verify ({where}{verified.problem}): a copy would "
                          "carry it under a fresh anchor; nothing was copied",
                          reason="unverified")


def chain_head(conn: sqlite3.Connection | Connection[Any], table: str) -> Anchor | None:
    """The newest row of the log or the consent history (None: empty), on either store."""
    row = conn.execute(f"select seq, hash from {table} order by seq desc limit 1").fetchone()
    return None if row is None else Anchor(int(row[0]), str(row[1]))


class _Watch:
    """Tells whether any other connection committed to the source since it was made:
    SQLite's ``data_version`` moves with every commit of another connection, whatever
    it wrote (a minted token or a meta value moves neither chain's head nor the change
    feed). Made before the copy's snapshot begins, so a commit after it is seen."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._conn = connect_read_only(path)
        self._version = self._read()

    def _read(self) -> int:
        return int(self._conn.execute("pragma data_version").fetchone()[0])

    def refuse_changed(self) -> None:
        """Refuse the copy if the source was written to, or opened by another program,
        since this watch was made.

        Raises:
            StoreFailed: reason ``changed`` (or ``in-use``); the caller's transaction
                on the target then rolls back.
        """
        refuse_in_use(self.path, reading=True)
        if self._read() != self._version:
            self.moved()

    def moved(self) -> None:
        """Raise: the source was written to meanwhile.

        Raises:
            StoreFailed: reason ``changed``.
        """
        raise StoreFailed(f"{self.path} changed while it was copied (another program wrote "
                          "to it): nothing was copied; stop what uses it and copy again",
                          reason="changed")

    def close(self) -> None:
        """Close its connection."""
        self._conn.close()


def _write(target: Link, source: sqlite3.Connection, report: CopyReport,
           anchors: Path | None, check_source: Callable[[], None]) -> None:
    """Make the target's schema, then copy every table in one transaction and commit;
    then this machine's anchor at the copied log's head."""
    committing = False
    try:
        conn = target.conn
        # A copy is made once, as a migration is: its round trips (a large COPY's end,
        # its COMMIT) may take longer than a served statement's.
        with conn.patience(COPY_S):
            with conn.transaction():
                refuse_lost_ledger(conn)
                _refuse_not_empty(conn, target.dsn)  # before migrating a store in use
            migrate(conn)
            anchor = _anchor_of(conn, anchors, target.dsn)
            conn.execute("begin")
            # The engine's own write: the triggers that feed hand edits pass its rows by.
            conn.execute(f"select {ENGINE_MARK}")
            xact_lock(conn, Lock.WRITE)
            _refuse_not_empty(conn, target.dsn)  # again under the lock: an engine may be open
            for table in COPIED:
                report.tables[table.name] = _copy_table(source, conn, table)
            # Rate events keep their ids (their order): new ones are numbered after them.
            conn.execute("select setval(pg_get_serial_sequence('rate_events', 'id'),"
                         " coalesce(max(id), 0) + 1, false) from rate_events")
            # Engines already open on the (empty) target read the whole store again.
            record_change(conn, "reload", {"copied": True}, t=time.time())
            check_source()
            with deferred_interrupt():
                committing = True
                conn.execute("commit")
                committing = False
                if report.log is not None:
                    _write_anchor(anchor, report.log, target.dsn)
                    report.anchor = str(anchor.path)
    except psycopg.Error as exc:
        target.abandon()
        # A connection lost in the COMMIT's round trip leaves its fate unknown here.
        fate = ("the connection was lost as it committed: see whether the target holds "
                "the copy before copying again" if committing else "nothing was copied")
        raise StoreFailed(f"cannot copy into the PostgreSQL store {redact(target.dsn)}: "
                          f"{exc}; {fate}", reason="connection") from exc
    except BaseException:
        target.abandon()  # Ctrl-C or a refusal halfway: rolled back, nothing copied
        raise


def _anchor_of(conn: Connection[Any], anchors: Path | None, dsn: str) -> AnchorFile:
    """This machine's anchor of the target, its folder made, checked to name no rows.

    Raises:
        StoreFailed: reason ``anchor``: its folder cannot be made, or it names rows
            (`_refuse_stale_anchor`).
    """
    try:
        anchor = local_anchor(conn, anchors)
    except OSError as exc:
        raise StoreFailed(f"cannot make this machine's anchor of {redact(dsn)}: {exc} (the "
                          "anchors live beside the default database: set ARROWGATE_DB to a "
                          "file in a writable folder); nothing was copied",
                          reason="anchor") from exc
    _refuse_stale_anchor(anchor, dsn)
    return anchor


def _write_anchor(anchor: AnchorFile, head: Anchor, dsn: str) -> None:
    """Record the copied log's newest row in this machine's anchor (the copy committed).

    Raises:
        StoreFailed: reason ``anchor``: it could not be written; the copy stands.
    """
    try:
        anchor.write(AnchorState(head))
    except (OSError, ValueError) as exc:
        raise StoreFailed(f"the copy into {redact(dsn)} committed, but this machine's anchor "
                          f"{anchor.path} could not be written ({exc}): the log is not "
                          "vouched for here until an engine on this machine appends to it",
                          reason="anchor") from exc


def _refuse_not_empty(conn: Connection[Any], dsn: str) -> None:
    """Refuse a target whose store holds rows in any copied table (a canvas, a log, a
    grant): a copy never merges into one.

    Raises:
        StoreFailed: reason ``not-empty``, naming the tables.
    """
    present = {str(r[0]) for r in conn.execute(
        "select table_name from information_schema.tables"
        " where table_schema = current_schema()")}
    held = [t.name for t in COPIED if t.name in present and conn.execute(
        sql.SQL("select exists (select 1 from {})").format(sql.Identifier(t.name))
    ).fetchone() == (True,)]
    if held:
        raise StoreFailed(f"the PostgreSQL store {redact(dsn)} is not empty (rows in "
                          f"{', '.join(held)}): a copy goes only into a database holding no "
                          "canvas, never merged into one; nothing was copied",
                          reason="not-empty")


def _refuse_stale_anchor(anchor: AnchorFile, dsn: str) -> None:
    """Refuse when this machine's anchor of the (empty) target names rows: it was left
    by a database of the same name dropped since, and would call the copy cut short.

    Raises:
        StoreFailed: reason ``anchor``, naming the file to remove.
    """
    try:
        state = anchor.read()
    except ValueError as exc:
        raise StoreFailed(f"this machine's anchor of {redact(dsn)} cannot be read ({exc}): "
                          f"remove {anchor.path} (the database holds no log it vouches "
                          "for); nothing was copied", reason="anchor") from exc
    if state is not None and (state.committed is not None or state.pending is not None):
        raise StoreFailed(f"this machine's anchor of {redact(dsn)}, {anchor.path}, names rows "
                          "of a log this empty database does not hold (a database of the "
                          "same name dropped and made again): remove that file first; "
                          "nothing was copied", reason="anchor")


def _copy_table(source: sqlite3.Connection, conn: Connection[Any], table: Copied) -> int:
    """Copy one table's rows from ``source`` into ``conn`` (COPY); returns how many.

    Raises:
        StoreFailed: reason ``not-copyable``: a value PostgreSQL's columns cannot hold
            (a NUL character in text, bytes), naming where.
    """
    where = f" where not ({table.skip})" if table.skip else ""
    rows = source.execute(f"select * from {table.name}{where} order by {table.order}")
    columns = [d[0] for d in rows.description]
    keys = [columns.index(key.strip()) for key in table.order.split(",")]
    statement = sql.SQL("copy {} ({}) from stdin").format(
        sql.Identifier(table.name), sql.SQL(", ").join(map(sql.Identifier, columns)))
    count = 0
    with conn.cursor().copy(statement) as out:
        for row in rows:
            for column, value in zip(columns, row):
                if isinstance(value, bytes) or (isinstance(value, str) and "\x00" in value):
                    named = ", ".join(f"{columns[k]} {row[k]!r}" for k in keys)
                    raise StoreFailed(
                        f"the {table.name} row of {named} holds in {column} "
                        f"{'bytes' if isinstance(value, bytes) else 'a NUL character'}, "
                        "which PostgreSQL's text cannot hold: the copy would have to "
                        "change it (and a log row's hash with it); nothing was copied",
                        reason="not-copyable")
            out.write_row(row)
            count += 1
    return count


@contextlib.contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Ctrl-C waits while the copy commits and its anchor is written: the copy is then
    whole, and so is what vouches for it (on the main thread; elsewhere no signal
    arrives)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[object] = []
    previous = signal.signal(signal.SIGINT, lambda *args: caught.append(args))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
