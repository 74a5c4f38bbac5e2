"""A whole PostgreSQL store copied into a new SQLite file (``arrowgate copy --store URL
--to FILE``): the way back from a shared canvas to one used alone, with the same
tables as `engine.store.copying` copies the other way (`COPIED`).

How it stays safe:

- the source is only read, and only when no other session is connected to its
  database (an engine still serving it would go on writing there after the copy); it
  must be up to date and its log, this machine's anchor of it and its consent history
  must verify (a tampered log is never laundered into a fresh anchor);
- it is read in one REPEATABLE READ snapshot, and checked again before the target
  commits: a source that moved meanwhile (its change feed, either chain's head, or its
  tokens, which a mint adds off the feed) or that another session is on now fails the
  copy;
- the target is a file that does not exist: it is made under a hidden name beside it,
  filled in one transaction with its log's side tables keyed and an empty change feed,
  anchored as every SQLite commit is (the pending record before COMMIT, the committed
  one after), and only then put in place, never over a file that appeared meanwhile.
  A failure or Ctrl-C on the way leaves no file; a copy killed on the way (SIGKILL, a
  power cut) leaves its hidden files, which the next copy to that target removes: each
  copy holds a lock file of its own (`_Claim`) for as long as it runs, so files whose
  lock nobody holds are a copy's that no longer runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg import Connection, sql

from engine.core.errors import StoreFailed
from engine.store.anchor import HISTORY_EMPTY, Anchor, AnchorFile, AnchorState
from engine.store.copying import (
    COPIED,
    Copied,
    CopyReport,
    chain_head,
    deferred_interrupt,
    refuse_unverified,
)
from engine.store.database import open_database
from engine.store.log import refuse_missing
from engine.store.logkeys import add_keys
from engine.store.migrations import migrations
from engine.store.pg.anchoring import local_anchor
from engine.store.pg.parts import Link, PGHistory, PGLog, redact
from engine.store.pg.schema import MIGRATIONS, applied, missing_tables, refuse_unknown

__all__ = ["copy_to_sqlite"]

#: Rows fetched from the server at a time.
_PAGE = 5_000


def copy_to_sqlite(dsn: str, path: str | Path, *, schema: str | None = None,
                   anchors: Path | None = None) -> CopyReport:
    """Copy the PostgreSQL store at ``dsn`` into a new SQLite file at ``path``, whole.

    Args:
        dsn: the store's ``postgresql://`` URL.
        path: where the SQLite file is made; nothing may be there.
        schema: the store's schema (``search_path``); None for the default.
        anchors: the folder of this machine's anchors of PostgreSQL stores.

    Returns:
        The rows copied per table and the chains' heads (``anchor``: the new file's).

    Raises:
        StoreFailed: reason ``exists`` (something is at ``path``), ``no-store``,
            ``older-schema`` (an engine of this arrowgate must open it first),
            ``schema-mismatch`` or ``missing-table``, ``in-use`` (another session is
            connected to the database), ``unverified`` (naming the first bad row),
            ``changed`` (the source moved while copied), ``connection``. No file is
            left at ``path`` in any of these cases.
    """
    target = Path(path)
    _refuse_existing(target)
    link = Link(dsn, schema=schema)
    try:
        try:
            conn = link.conn
            _refuse_unusable(conn, dsn)
            _refuse_in_use(conn, dsn)
            verified = PGLog(link).verify(PGHistory(link),
                                          local_anchor(conn, anchors, make=False))
            refuse_unverified(verified, f"the log of {redact(dsn)}")
            conn.execute("begin isolation level repeatable read read only")
            heads = _heads(conn)
            copying = conn.info.backend_pid
            if (0 if heads[0] is None else heads[0].seq) != verified.rows:
                _refuse_changed(dsn, schema, (None, None, -1, (-1, 0.0)), copying)
            report = CopyReport(redact(dsn), str(target), log=heads[0], history=heads[1])
            _write(conn, target, report,
                   lambda: _refuse_changed(dsn, schema, heads, copying))
            conn.execute("rollback")
        except psycopg.Error as exc:
            raise StoreFailed(f"cannot copy from the PostgreSQL store {redact(dsn)}: {exc}; "
                              "nothing was copied", reason="connection") from exc
    finally:
        link.close()
    return report


def _refuse_existing(target: Path) -> None:
    """Refuse a target where anything is: a copy never merges into, or replaces, a store.

    Raises:
        StoreFailed: reason ``exists``, naming what is there.
    """
    for name in (str(target), f"{target}-wal", f"{target}.anchor"):
        if os.path.lexists(name):
            raise StoreFailed(f"{name} exists: a copy is made only as a new file, never "
                              "into or over one; nothing was copied", reason="exists")
    if not target.parent.is_dir():
        raise StoreFailed(f"no folder {target.parent} for {target.name}; nothing was copied",
                          reason="exists")


def _refuse_unusable(conn: Connection[Any], dsn: str) -> None:
    """Refuse a database holding no store, another schema, an older store (its engines
    upgrade it as they open it), or one missing a table.

    Raises:
        StoreFailed: reason ``no-store``, ``schema-mismatch``, ``older-schema`` or
            ``missing-table``.
    """
    with conn.transaction():
        refuse_unknown(conn)
        done = applied(conn)
        if not done:
            raise StoreFailed(f"the PostgreSQL database {redact(dsn)} holds no arrowgate "
                              "store; nothing was copied", reason="no-store")
        if len(done) < len(MIGRATIONS):
            lacks = ", ".join(m.name for m in MIGRATIONS[len(done):])
            raise StoreFailed(f"the PostgreSQL store {redact(dsn)} was made by an older "
                              f"arrowgate (it lacks {lacks}): open it with this arrowgate's "
                              "engine first (`arrowgate serve --store URL` upgrades it), once "
                              "no older engine shares it", reason="older-schema")
        refuse_missing(missing_tables(conn))


def _refuse_in_use(conn: Connection[Any], dsn: str, *, copying: int = 0) -> None:
    """Refuse a source another session is connected to: an engine serving it would go on
    writing there after the copy.

    Args:
        copying: the process id of the copy's own session, when it is not ``conn``'s.

    Raises:
        StoreFailed: reason ``in-use``, naming up to three sessions (process id and
            application name, never their queries).
    """
    others = conn.execute(
        "select pid, coalesce(nullif(application_name, ''), 'no application name')"
        " from pg_stat_activity where datname = current_database()"
        " and pid not in (pg_backend_pid(), %s) and backend_type = 'client backend'"
        " order by backend_start", [copying]).fetchall()
    if others:
        named = "; ".join(f"session {pid} ({app})" for pid, app in others[:3])
        raise StoreFailed(f"the PostgreSQL database {redact(dsn)} is in use ({named}): stop "
                          "the engines and sessions using it first (one still serving it "
                          "would go on writing there after the copy); nothing was copied",
                          reason="in-use")


#: What tells a store moved: the log's and the history's newest rows, the change feed's
#: newest number, and the tokens' count and newest time.
_Heads = tuple[Anchor | None, Anchor | None, int, tuple[int, float]]


def _heads(conn: Connection[Any]) -> _Heads:
    """The log's newest row, the history's newest entry, the change feed's newest
    number (every engine's batch records a change; so does a hand's edit) and the
    tokens' count and newest time (a token minted is not on the feed, and moves
    neither chain: `engine.store.pg.parts.PGTokens.insert`)."""
    changes = conn.execute("select coalesce(max(seq), 0) from changes").fetchone()
    tokens = conn.execute("select count(*), coalesce(max(t), 0) from service_tokens").fetchone()
    return (chain_head(conn, "log"), chain_head(conn, "consent"), int(changes[0] if changes else 0),
            (int(tokens[0]), float(tokens[1])) if tokens else (0, 0.0))


def _refuse_changed(dsn: str, schema: str | None, heads: _Heads, copying: int) -> None:
    """Refuse the copy if the source moved since its snapshot, or another session is on
    it now (one that connected since it was found unused would go on writing there);
    read on a new session, beside the copy's own (process ``copying``).

    Raises:
        StoreFailed: reason ``changed`` or ``in-use``.
    """
    look = Link(dsn, schema=schema)
    try:
        _refuse_in_use(look.conn, dsn, copying=copying)
        now = _heads(look.conn)
    finally:
        look.close()
    if now != heads:
        raise StoreFailed(f"the PostgreSQL store {redact(dsn)} changed while it was copied: "
                          "nothing was copied; stop what uses it and copy again",
                          reason="changed")


#: The ends of the names of a copy's hidden files: the database, SQLite's, its anchor's.
_MADE = ("", "-wal", "-shm", ".anchor", ".anchor.lock")
#: Its lock file's: held for as long as the copy runs.
_LOCK = ".lock"


def _hidden_name(target: Path) -> re.Pattern[str]:
    """The hidden database names copies to ``target`` make (`_write`)."""
    return re.compile(rf"\.{re.escape(target.name)}\.copy-[0-9a-f]{{8}}")


def _clear_killed(target: Path) -> None:
    """Remove the hidden files of copies to ``target`` killed on the way: those whose
    lock file nobody holds, or that have none (killed before or as it was made). A
    copy under way holds its lock, so its files stay; nothing else is touched."""
    hidden = _hidden_name(target)
    try:
        names = {entry.name for entry in os.scandir(target.parent)}
    except OSError:
        return  # the folder cannot be read: the copy itself will say so
    for base in sorted(n for n in names if hidden.fullmatch(n)):
        try:
            lock = os.open(target.parent / f"{base}{_LOCK}",
                           os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            lock = None
        except OSError:
            continue  # a lock file that cannot be opened: leave its copy's files be
        try:
            if lock is not None:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue  # held: a copy under way
            for end in (*_MADE, _LOCK):
                with contextlib.suppress(OSError):  # gone already: nothing to do
                    (target.parent / f"{base}{end}").unlink()
        finally:
            if lock is not None:
                os.close(lock)


def _write(source: Connection[Any], target: Path, report: CopyReport,
           check_source: Callable[[], None]) -> None:
    """Make the file under a hidden name, copy every table into it in one transaction
    anchored as SQLite's commits are, then put it (and its anchor) at ``target``."""
    _clear_killed(target)
    hidden = target.with_name(f".{target.name}.copy-{secrets.token_hex(4)}")
    made = [Path(f"{hidden}{s}") for s in _MADE]
    lock: int | None = None
    try:
        # Held until every hidden file is gone: a copy killed on the way lets go of it,
        # and the next copy to the target then removes what it left (`_clear_killed`).
        lock = os.open(f"{hidden}{_LOCK}",
                       os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX)
        db = open_database(hidden)
        try:
            migrations.apply(db)
            conn = db.conn
            conn.execute("BEGIN IMMEDIATE")
            for table in COPIED:
                report.tables[table.name] = _copy_table(source, conn, table)
            newest = report.log.seq if report.log is not None else 0
            add_keys(conn, 0, newest)  # the log's side tables, as `create_keys` keys a log
            # The new file's feed starts empty: no engine has it open to follow it.
            conn.execute("delete from changes")
            anchor = AnchorFile(f"{hidden}.anchor")
            history = report.history or HISTORY_EMPTY
            anchored = report.log is not None or report.history is not None
            if anchored:
                conn.execute("insert or ignore into meta (key, value) values ('anchored', '1')")
                anchor.write(AnchorState(None, report.log, HISTORY_EMPTY, history))
            check_source()
            with deferred_interrupt():
                conn.execute("COMMIT")
                if anchored:
                    anchor.write(AnchorState(report.log, None, history))
            # Everything into the file itself: it is linked into place alone, without
            # its -wal (the last connection's close would do it, unchecked).
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy is None or busy[0] != 0:
                raise OSError(f"{hidden}'s WAL could not be checkpointed: {busy}")
        finally:
            db.close()
        with deferred_interrupt():
            _put(hidden, made[3], target)
        if anchored:
            report.anchor = f"{target}.anchor"
    except (OSError, sqlite3.Error) as exc:
        # SQLite's own ("unable to open database file", "disk is full") as the system's.
        raise StoreFailed(f"cannot make {target}: {exc}; nothing was copied",
                          reason="exists" if isinstance(exc, FileExistsError) else "io"
                          ) from exc
    finally:
        for leftover in made:
            try:
                leftover.unlink()
            except OSError:  # never there (or its name never could be): the error stands
                pass
        if lock is not None:
            with contextlib.suppress(OSError):
                Path(f"{hidden}{_LOCK}").unlink()
            os.close(lock)


def _put(made: Path, made_anchor: Path, target: Path) -> None:
    """Give the file made and its anchor their names (hard links; the hidden names are
    removed after), unless something is at either now: never over a file that appeared
    meanwhile, and never the one without the other.

    Raises:
        FileExistsError: something is at ``target`` or its anchor's name.
    """
    os.link(made, target)
    if made_anchor.exists():
        try:
            os.link(made_anchor, f"{target}.anchor")
        except BaseException:
            target.unlink()
            raise


def _copy_table(source: Connection[Any], conn: sqlite3.Connection, table: Copied) -> int:
    """Copy one table's rows from the server into the file; returns how many."""
    where = sql.SQL(" where not ({})").format(sql.SQL(table.skip)) if table.skip else sql.SQL("")
    statement = sql.SQL("select * from {}{} order by {}").format(
        sql.Identifier(table.name), where, sql.SQL(table.order))
    count = 0
    with source.cursor(name=f"copy_{table.name}") as rows:
        rows.itersize = _PAGE
        rows.execute(statement)
        insert = ""
        while batch := rows.fetchmany(_PAGE):
            if not insert:
                columns = [d.name for d in rows.description or ()]
                insert = (f"insert into {table.name} ({', '.join(f'[{c}]' for c in columns)})"
                          f" values ({', '.join('?' for _ in columns)})")
            conn.executemany(insert, batch)
            count += len(batch)
    return count
