"""The store's schema: one ordered chain of migrations, applied when the store opens.

Every table of the app's SQLite file (the canvas's and the engine's) is made
and changed only here, one step after another; `migrations.apply` runs the
steps a database lacks, all of them in one ``BEGIN IMMEDIATE`` transaction,
so two processes opening a new file at once cannot both run a step, and a
step that fails leaves the schema as it was.

Each step applied is recorded in the ledger table ``_sqlite_migrations``
under the set ``arrowgate``. Until the chains merged, the schema was two
sqlite-utils migration sets recorded in the same ledger: ``engine``
(m001–m007 here, same names) and ``canvas`` (its m001_canvas and
m002_node_position_index are m008 and m009 here). A step records what it was
called there (``was``), and a database made then has its recorded steps
adopted into this chain on first open, never run again.
"""

from __future__ import annotations

import datetime
import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.core.errors import StoreFailed
from engine.store.ahead import ahead_of_code, ahead_text
from engine.store.database import (
    MIGRATION_LEDGER,
    MIGRATION_SET,
    database_file,
    write_transaction,
)
from engine.store.fileholders import holders
from engine.store.logkeys import create_keys
from engine.store.promptrows import IN_PLAY_SQL
from engine.store.reading import Queryable
from engine.store.writelock import is_busy

if TYPE_CHECKING:
    # The steps are handed one (`Chain.apply`); reading the ledger needs none, and the
    # verifier process, which only reads it, never pays for importing sqlite-utils.
    from sqlite_utils import Database

__all__ = ["LEDGER", "REVOKE_REMOVED_NODES_TOKENS", "SET", "Chain", "Migration", "migrations"]

#: Where a wait for another program's migration is told (`Chain.apply`).
_log = logging.getLogger("arrowgate.store")

#: The ledger table (the one sqlite-utils' migrations kept, so old entries stay readable).
LEDGER = MIGRATION_LEDGER
#: This chain's name in the ledger.
SET = MIGRATION_SET


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the chain."""

    name: str
    run: Callable[[Database], None]
    #: (set, name) the step was recorded as before the chains merged (None: newer).
    was: tuple[str, str] | None
    #: The tables the step makes (`Chain.missing_tables`; tests/unit/test_migrations_makes.py
    #: holds it to what running the step makes).
    makes: tuple[str, ...] = ()


class Chain:
    """An ordered list of migrations and the ledger of those a database has."""

    def __init__(self) -> None:
        self._steps: list[Migration] = []

    def __call__(self, *, was: tuple[str, str] | None = None, makes: tuple[str, ...] = ()
                 ) -> Callable[[Callable[[Database], None]], Callable[[Database], None]]:
        """Add the decorated function as the next step, which makes the tables ``makes``."""

        def add(fn: Callable[[Database], None]) -> Callable[[Database], None]:
            if any(m.name == fn.__name__ for m in self._steps):
                raise ValueError(f"migration {fn.__name__!r} is in the chain already")
            self._steps.append(Migration(fn.__name__, fn, was, makes))
            return fn

        return add

    @property
    def steps(self) -> tuple[Migration, ...]:
        """Every step, in order."""
        return tuple(self._steps)

    @property
    def names(self) -> list[str]:
        """Every step's name, in order."""
        return [m.name for m in self._steps]

    def applied(self, db: Queryable) -> list[str]:
        """Names of the steps the database has, in the chain's order (old records counted)."""
        done = self._recorded(db)
        return [m.name for m in self._steps if m.name in done[0] or m.was in done[1]]

    def pending(self, db: Database) -> list[Migration]:
        """The steps the database lacks, in order."""
        have = set(self.applied(db))
        return [m for m in self._steps if m.name not in have]

    def apply(self, db: Database, *, stop_before: str | None = None) -> list[str]:
        """Run the steps the database lacks, in one transaction; returns their names.

        Reading the ledger takes no lock, so opening a database that is up
        to date writes nothing. Otherwise the ledger is read again under the
        write lock (another process may have migrated meanwhile), the steps
        an old set recorded are adopted (recorded in this chain, not run),
        and the pending steps run and are recorded.

        Args:
            stop_before: apply only the steps before this one (tests build
                databases as older versions left them).

        Raises:
            ValueError: ``stop_before`` names a step the database already has.
            StoreFailed: the ledger records a step this chain does not know
                (`refuse_unknown`), or a step fails on the schema (reason
                ``schema-mismatch``, naming it); nothing is written.
        """
        self.refuse_unknown(db)
        if stop_before is not None and stop_before in self.applied(db):
            raise ValueError(f"cannot stop before {stop_before}: it is applied already")
        mine, _old = self._recorded(db)
        if all(m.name in mine for m in self._steps):
            return []  # up to date, and recorded as this chain: nothing to write
        done: list[str] = []
        _say_if_locked(db)
        try:
            with write_transaction(db):
                self._ensure_ledger(db)
                self._adopt(db)
                for step in self.pending(db):
                    if step.name == stop_before:
                        break
                    try:
                        step.run(db)
                    except sqlite3.OperationalError as exc:
                        if not any(part in str(exc) for part in _SCHEMA_CLASHES):
                            raise  # a failing disk, a lock: what it is, not the schema
                        # The transaction rolls back: the store is left as it was.
                        raise StoreFailed(
                            f"the database's migration {step.name} cannot be applied ({exc}):"
                            " its ledger lacks the step, but the schema differs from the one"
                            " before it (a half-applied migration, or an edited ledger or"
                            " schema); nothing was changed",
                            reason="schema-mismatch") from exc
                    self._record(db, step.name)
                    done.append(step.name)
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            file = database_file(db) or "in memory"
            raise StoreFailed(
                f"cannot migrate the store {file}: another program held its write lock for "
                f"more than {_busy_timeout(db):g} s (the busy timeout ran out); "
                f"{holders(file)}. Nothing was migrated, so the store is as it was: open it "
                "again once that program is done (another arrowgate upgrading it) or has "
                "quit", reason="locked") from exc
        return done

    def behind(self, db: Queryable) -> list[str]:
        """The steps `apply` would write for: each not yet recorded in this chain (not
        run, or recorded by an old set only), in order. Empty: opening the database
        writes nothing."""
        mine, _old = self._recorded(db)
        return [m.name for m in self._steps if m.name not in mine]

    def missing_tables(self, db: Queryable) -> list[str]:
        """The tables the database's applied steps made that it no longer has, sorted.

        Only the engine makes and drops the store's tables, so one missing was
        removed outside it: `log verify` reports it (a dropped consent history
        is an edit of the store as much as its deleted rows are). Which tables
        the steps made each step says (`Migration.makes`): the verifier process
        asks this of every store it verifies, and running the steps on an empty
        database to learn it would import sqlite-utils there for that alone.
        """
        present = {str(r[0]) for r in db.execute(
            "select name from sqlite_master where type = 'table'")}
        applied = set(self.applied(db))
        made = _tables_made(tuple(m for m in self._steps if m.name in applied))
        return sorted(made - present)

    def unknown(self, db: Queryable) -> list[str]:
        """Steps the ledger records that the chain does not have, in the order recorded:
        a newer engine's in this chain (or a different schema's), and any recorded under
        the sets from before the chains merged that no step here was (a build of a branch
        numbered its steps otherwise), named with their set. Other sets are other
        programs' and left alone."""
        known = set(self.names)
        old = {m.was for m in self._steps if m.was is not None}
        old_sets = {kind for kind, _name in old}
        return [name if kind == SET else f"{name} of the set {kind}"
                for kind, name in self._ledger_rows(db)
                if (kind == SET and name not in known)
                or (kind in old_sets and (kind, name) not in old)]

    def refuse_unknown(self, db: Queryable) -> None:
        """Raise unless every step the ledger records is one of this chain's (or, under
        the sets from before the chains merged, one a step here was: `unknown`).

        A store a newer engine migrated has tables (or meanings of columns)
        this code does not know: writing to it could break it for that engine,
        and reading it could misjudge it. So it is refused before anything is
        written, as the PostgreSQL store refuses the same case
        (`engine.store.pg.schema.migrate`).

        A store whose ledger was dropped or emptied while its tables stand is
        refused too (`refuse_lost_ledger`).

        Raises:
            StoreFailed: reason ``schema-mismatch``, naming the unknown steps;
                ``missing-table`` or ``schema-mismatch`` for a lost ledger.
        """
        self.refuse_lost_ledger(db)
        extra = self.unknown(db)
        recorded = [name for kind, name in self._ledger_rows(db) if kind == SET]
        if extra and len(extra) == len(set(recorded) - set(self.names)) and ahead_of_code(
                recorded, self.names):
            # Each unknown step is of this chain, after all of this code's: a newer
            # arrowgate's (not a step of the old sets no step here was).
            raise StoreFailed(f"the database cannot be opened: {ahead_text(recorded, self.names)}",
                              reason="schema-mismatch")
        if extra:
            raise StoreFailed(
                f"the database has migrations this engine does not know ({', '.join(extra)}):"
                " a newer engine upgraded it, or it holds another schema; open it with"
                " that engine",
                reason="schema-mismatch")

    @staticmethod
    def mark(conn: sqlite3.Connection) -> int:
        """The ledger's newest entry (0: none), one look along its key: it moves only
        when a step is recorded, so an engine that has the store open compares it to
        what it was at open to learn that another process migrated the store."""
        if not conn.execute("select 1 from sqlite_master where type = 'table' and name = ?",
                            [LEDGER]).fetchone():
            return 0
        row = conn.execute(f"select coalesce(max(id), 0) from {LEDGER}").fetchone()
        return int(row[0]) if row else 0

    def refuse_lost_ledger(self, db: Queryable) -> None:
        """Refuse a store whose ledger was dropped or emptied while its tables stand.

        Only the engine writes the ledger, and it never empties it: the store's tables
        with no step recorded were left by an engine whose ledger someone removed.
        Running the chain on them would make the schema afresh on top of the one there;
        reading them as a database without a store would misjudge it. As the
        PostgreSQL store refuses the same case (`engine.store.pg.schema`).

        Raises:
            StoreFailed: reason ``missing-table`` (the ledger dropped) or
                ``schema-mismatch`` (the ledger there, recording nothing), naming it.
        """
        if self._ledger_rows(db):
            return
        present = {str(r[0]) for r in db.execute(
            "select name from sqlite_master where type = 'table'")}
        found = sorted(_tables_made(tuple(self._steps)) & present)
        if not found:
            return  # a new database: nothing of a store in it
        shown = ", ".join(found[:5]) + (", …" if len(found) > 5 else "")
        if LEDGER not in present:
            # As `engine.store.log.refuse_missing` words a missing table (which this
            # module cannot import: the log reads its chain).
            raise StoreFailed(f"the store's table {LEDGER} is missing: the engine made it and "
                              "never removes one, so it was removed outside the engine, while "
                              f"the store's tables are there ({shown}); the store cannot be "
                              "used until it is restored, and nothing was written",
                              reason="missing-table")
        raise StoreFailed(f"the database's migrations ledger {LEDGER} records no step, but "
                          f"the store's tables are there ({shown}): it was emptied outside "
                          "the engine, which never does so; the store cannot be opened until "
                          "it is restored, and nothing was written", reason="schema-mismatch")

    # ---------------------------------------------------------- internals
    @staticmethod
    def _ledger_rows(db: Queryable) -> list[tuple[str, str]]:
        """Every (set, name) the ledger records, in the order recorded ([] when none)."""
        if not db.execute("select 1 from sqlite_master where type = 'table' and name = ?",
                          [LEDGER]).fetchone():
            return []
        return [(str(kind), str(name)) for kind, name in
                db.execute(f"select migration_set, name from {LEDGER} order by id")]

    @staticmethod
    def _recorded(db: Queryable) -> tuple[set[str], set[tuple[str, str]]]:
        """(names recorded in this chain, (set, name) recorded in the old sets)."""
        rows = Chain._ledger_rows(db)
        return ({name for kind, name in rows if kind == SET},
                {(kind, name) for kind, name in rows if kind != SET})

    @staticmethod
    def _ensure_ledger(db: Database) -> None:
        # The same table sqlite-utils makes, so a database keeps one ledger.
        db.execute(f"create table if not exists [{LEDGER}] ([id] INTEGER PRIMARY KEY,"
                   " [migration_set] TEXT, [name] TEXT, [applied_at] TEXT)")
        db.execute(f"create unique index if not exists [idx_{LEDGER}_migration_set_name]"
                   f" on [{LEDGER}] ([migration_set], [name])")

    def _adopt(self, db: Database) -> None:
        """Record in this chain the steps an old set recorded (when, as it said)."""
        mine, old = self._recorded(db)
        for step in self._steps:
            if step.name not in mine and step.was is not None and step.was in old:
                db.execute(f"insert into {LEDGER} (migration_set, name, applied_at)"
                           f" select ?, ?, applied_at from {LEDGER}"
                           " where migration_set = ? and name = ?",
                           [SET, step.name, *step.was])

    @staticmethod
    def _record(db: Database, name: str) -> None:
        db.execute(f"insert into {LEDGER} (migration_set, name, applied_at) values (?, ?, ?)",
                   [SET, name, str(datetime.datetime.now(datetime.UTC))])


def _busy_timeout(db: Queryable) -> float:
    """The connection's busy timeout, in seconds."""
    row = db.execute("pragma busy_timeout").fetchone()
    return int(row[0]) / 1000 if row else 0.0


def _say_if_locked(db: Database) -> None:
    """Say so when another program holds the write lock a migration is about to wait
    for (another arrowgate migrating the store, most likely): a start-up that waits in
    silence looks hung. The lock is tried without waiting and let go at once; the
    migration then waits for it as long as the busy timeout says."""
    conn = db.conn
    if conn.in_transaction:
        return  # the caller's transaction holds what it holds
    timeout = _busy_timeout(db)
    try:
        conn.execute("pragma busy_timeout = 0")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        if not is_busy(exc):
            raise
        file = database_file(db) or "in memory"
        _log.warning("another program holds the write lock of the SQLite store %s, "
                     "migrating it most likely (%s): waiting for it before migrating it, at "
                     "most %g s", file, holders(file), timeout)
    finally:
        conn.execute(f"pragma busy_timeout = {int(timeout * 1000)}")


#: What SQLite says when a step finds the schema not as the step before left it.
_SCHEMA_CLASHES = ("already exists", "duplicate column", "no such table", "no such column",
                   "no such index")


def _tables_made(steps: tuple[Migration, ...]) -> frozenset[str]:
    """The tables an empty database holds after ``steps`` (no step drops one)."""
    return frozenset(table for step in steps for table in step.makes)


#: The store's one chain.
migrations = Chain()


@migrations(was=("engine", "m001_engine"),
            makes=("consent", "grants", "log", "meta", "packages", "prompts", "rate_events",
                   "usage"))
def m001_engine(db: Database) -> None:
    """Packages, grants, prompts, rate counters, the arrow log, consent history."""
    db.table("packages").create(
        {
            "name": str,
            "state": str,  # available | installed
            "manifest": str,  # JSON: the approved (or offered) manifest, raw
            "digests": str,  # JSON: path -> sha256
            "hash": str,
            "pending_manifest": str,
            "pending_digests": str,
            "pending_hash": str,
        },
        pk="name",
    )
    db.table("grants").create(
        {"package": str, "permission": str, "t": float, "by": str},
        pk=("package", "permission"),
    )
    db.table("prompts").create(
        {
            "id": str,
            "position": int,
            "workspace": str,
            "card": str,
            "package": str,
            "agent": str,
            "arrow": str,
            "call": str,
            "text": str,
            "chain": str,
            "state": str,
            "t": float,
            "deadline": float,
            "approver": str,
            "code": str,
            "reason": str,
            "message": str,
        },
        pk="id",
    )
    db.table("prompts").create_index(["state"])
    db.table("rate_events").create({"id": int, "card": str, "key": str, "t": float}, pk="id")
    db.execute(
        "create table log ("
        " seq integer primary key, t real, workspace text, arrow text, card text,"
        " package text, version text, call text, target text, payload text, chain text,"
        " outcome text, code text, reason text, approver text, prompt text,"
        " prev text not null, hash text not null)"
    )
    db.table("log").create_index(["arrow", "seq"])
    db.table("log").create_index(["card", "seq"])
    db.table("consent").create(
        {
            "seq": int,
            "t": float,
            "principal": str,
            "action": str,
            "subject": str,
            "accepted": int,
            "code": str,
            "reason": str,
            "detail": str,
        },
        pk="seq",
    )
    db.table("usage").create({"workspace": str, "tokens": int, "cost": float}, pk="workspace")
    db.table("meta").create({"key": str, "value": str}, pk="key")


@migrations(was=("engine", "m002_secrets"), makes=("secrets",))
def m002_secrets(db: Database) -> None:
    """Secrets stored by an operator, each for one host."""
    db.table("secrets").create({"name": str, "host": str, "value": str, "t": float}, pk="name")


@migrations(was=("engine", "m003_prompt_position"))
def m003_prompt_position(db: Database) -> None:
    """An index on prompts' position: every accepted prompt reads the highest one."""
    db.table("prompts").create_index(["position"], if_not_exists=True)


@migrations(was=("engine", "m004_consent_chain"))
def m004_consent_chain(db: Database) -> None:
    """Hash-chain the consent history (SPEC §8): each entry's previous hash, its own hash,
    and the digest of the grants it leaves; existing entries are hashed in order.

    The newest existing entry records the grants as they stand now: the chain
    begins trusting the store as it is at migration, and from then on a grant
    changed by hand is a finding.
    """
    from engine.store.history import GENESIS, entry_hash, grants_digest

    for column in ("prev", "hash", "grants"):
        db.execute(f"alter table consent add column {column} text")
    rows = db.execute("select seq from consent order by seq").fetchall()
    prev = GENESIS
    for i, (seq,) in enumerate(rows):
        row = db.execute("select * from consent where seq = ?", [seq]).fetchone()
        cols = [d[0] for d in db.execute("select * from consent limit 0").description]
        entry = dict(zip(cols, row))
        if i == len(rows) - 1:
            entry["grants"] = grants_digest(db)
        digest = entry_hash(prev, entry)
        db.execute("update consent set prev = ?, hash = ?, grants = ? where seq = ?",
                   [prev, digest, entry["grants"], seq])
        prev = digest


@migrations(was=("engine", "m005_log_payload_digest"))
def m005_log_payload_digest(db: Database) -> None:
    """A refused call's row keeps 4 KiB of its payload, with the whole one's length and SHA-256."""
    db.execute("alter table log add column payload_bytes integer")
    db.execute("alter table log add column payload_sha256 text")


@migrations(was=("engine", "m006_service_tokens"), makes=("service_tokens",))
def m006_service_tokens(db: Database) -> None:
    """Bearer tokens of the HTTP service (SPEC §10.1): only their SHA-256 is kept."""
    db.table("service_tokens").create(
        {"id": str, "hash": str, "principal": str, "t": float, "revoked": float}, pk="id")
    db.table("service_tokens").create_index(["hash"], unique=True)


@migrations(was=("engine", "m007_tool_calls"), makes=("tool_calls",))
def m007_tool_calls(db: Database) -> None:
    """Agents' tool calls to cards (SPEC §9): open ones survive a restart."""
    db.table("tool_calls").create(
        {"id": str, "position": int, "workspace": str, "agent": str, "card": str,
         "package": str, "tool": str, "arrow": str, "args": str, "chain": str, "state": str,
         "t": float, "deadline": float, "result": str, "code": str, "reason": str,
         "message": str, "ended": float}, pk="id")
    db.table("tool_calls").create_index(["state"])
    db.table("tool_calls").create_index(["position"])


@migrations(was=("canvas", "m001_canvas"), makes=("arrows", "nodes", "workspaces"))
def m008_canvas(db: Database) -> None:
    """Workspaces, nodes and arrows."""
    db.table("workspaces").create({"id": str, "folder": str, "settings": str}, pk="id")
    db.table("nodes").create(
        {"id": str, "workspace": str, "type": str, "data": str, "position": int}, pk="id"
    )
    db.table("nodes").create_index(["workspace"])
    db.table("arrows").create(
        {"id": str, "workspace": str, "src": str, "dst": str, "from_port": str, "to_port": str},
        pk="id",
    )
    db.table("arrows").create_index(["workspace"])


@migrations(was=("canvas", "m002_node_position_index"))
def m009_node_position_index(db: Database) -> None:
    """Index the insertion order, so adding a node does not scan the whole canvas."""
    db.table("nodes").create_index(["position"])


#: The tables a decision reads, the change kind each records and its key column.
_TRACKED = (("packages", "package", "name"), ("grants", "grants", "package"),
            ("workspaces", "workspace", "id"), ("nodes", "node", "id"),
            ("arrows", "arrow", "id"), ("prompts", "prompt", "id"),
            ("tool_calls", "tool_call", "id"), ("usage", "usage", "workspace"),
            ("secrets", "secrets", "name"))


@migrations(makes=("changes",))
def m010_changes(db: Database) -> None:
    """The change feed: what each committed write touched, for other processes' catch-up.

    Triggers write it, so every writer of the file records its changes, one
    that knows nothing of the feed included: another engine applies only
    these rows instead of reloading everything (`engine.store.loading.catch_up`).
    ``seq`` follows commit order (one writer at a time) without gaps (a
    rolled-back row never took a number that stays); old rows are pruned, and
    an engine further behind than what is kept reloads everything.
    """
    db.execute("create table changes (seq integer primary key, kind text not null,"
               " key text, key2 text, t real)")
    for table, kind, key in _TRACKED:
        db.execute(f"create trigger changes_{table}_insert after insert on {table}"
                   f" begin insert into changes (kind, key) values ('{kind}', new.{key}); end")
        db.execute(f"create trigger changes_{table}_delete after delete on {table}"
                   f" begin insert into changes (kind, key) values ('{kind}', old.{key}); end")
        db.execute(f"create trigger changes_{table}_update after update on {table}"
                   f" begin insert into changes (kind, key) values ('{kind}', old.{key});"
                   f" insert into changes (kind, key) select '{kind}', new.{key}"
                   f" where new.{key} is not old.{key}; end")
    # A counted call carries what the windows need; anything else done to the
    # events (a removed card's are deleted) makes the windows be read again.
    db.execute("create trigger changes_rate_events_insert after insert on rate_events"
               " begin insert into changes (kind, key, key2, t)"
               " values ('rate', new.card, new.key, new.t); end")
    db.execute("create trigger changes_rate_events_delete after delete on rate_events"
               " begin insert into changes (kind, key) values ('rates', old.card); end")
    db.execute("create trigger changes_rate_events_update after update on rate_events"
               " begin insert into changes (kind, key) values ('rates', old.card); end")
    # Keep the newest 16,384 rows: pruned every 1,024th, never the newest.
    db.execute("create trigger changes_prune after insert on changes"
               " when new.seq % 1024 = 0"
               " begin delete from changes where seq <= new.seq - 16384; end")


@migrations()
def m011_changes_pruned_at_commit(db: Database) -> None:
    """The change feed is pruned by the engine's commit, no longer by a trigger.

    ``changes_prune`` ran for every change row a write recorded (three for an
    accepted prompt), about 7,000 instructions each even when it pruned
    nothing: 8 % of an accepted prompt's SQL. The engine's commit now keeps
    the newest 16,384 rows (`engine.store.transactions.Transactions.flush`).
    """
    db.execute("drop trigger if exists changes_prune")


@migrations()
def m012_no_prompt_state_index(db: Database) -> None:
    """Drop the index on prompts' state: no statement reads prompts by state.

    The engine keeps the prompts in play in memory (`engine.core.prompts.PromptIndex`)
    and reads the table whole at open, by position; the index was one more
    b-tree to write for every prompt saved (an accepted prompt's row, and
    again as its state moves on).
    """
    db.execute("drop index if exists idx_prompts_state")


@migrations(makes=("log_arrows", "log_cards"))
def m013_log_keys(db: Database) -> None:
    """The log's rows by card and by arrow move from indexes on the log to side
    tables filled in bulk (`engine.store.logkeys`): an index wrote one leaf page
    a commit for every card (and arrow) in the batch. Every row already in the
    log is keyed here.
    """
    create_keys(db.conn)
    db.execute("drop index if exists idx_log_card_seq")
    db.execute("drop index if exists idx_log_arrow_seq")


@migrations(makes=("suppressed_pending",))
def m014_suppressed_pending(db: Database) -> None:
    """Pending summaries of suppressed refusals move from memory to the store
    (`engine.store.pending`): one row per budget key, upserted with the refusal
    that changed it, deleted with the ``suppressed`` log row written from it; so
    a killed process's counts are summed up by the next engine to open the file.

    No change-feed trigger here: no decision reads the table. Another engine
    learns of a budget's summary from the feed since m017 (before it, only at
    its open or a full reload), and reads the summary under the write lock
    when it writes that card's next row.
    """
    db.execute("create table suppressed_pending (key TEXT PRIMARY KEY,"
               " summary TEXT NOT NULL)")


@migrations()
def m015_hand_on_orphaned_spawns(db: Database) -> None:
    """Spawn trees older code left naming a removed root are handed on, once
    (`engine.store.orphans`): its first live copy becomes the root and takes its
    windows, so a new node given the freed id starts afresh."""
    # Imported by the step (it runs once a store): the spawn trees' rules
    # (`engine.core.limits`) are not wanted where the ledger is only read.
    from engine.store.orphans import orphan_repair

    conn = db.conn
    repair = orphan_repair(
        [(str(i), str(t), d) for i, t, d in conn.execute("select id, type, data from nodes")],
        [str(c) for (c,) in conn.execute("select distinct card from rate_events"
                                         " where card is not null")])
    conn.executemany("update nodes set data = ? where id = ?",
                     [(data, node) for node, data in repair.nodes])
    for gone, heir in repair.windows:
        if heir is None:
            conn.execute("delete from rate_events where card = ?", [gone])
        else:
            conn.execute("update rate_events set card = ? where card = ?", [heir, gone])


#: Live service tokens of a card or agent no node is now (`m016_revoke_removed_nodes_tokens`;
#: PostgreSQL's m005 is the same statement). ``substr``, not ``like``: SQLite's
#: ``like`` ignores case, and ``CARD:x`` names no node.
REVOKE_REMOVED_NODES_TOKENS = (
    "update service_tokens set revoked = {now} where revoked is null"
    " and (substr(principal, 1, 5) = 'card:' or substr(principal, 1, 6) = 'agent:')"
    " and principal not in (select type || ':' || id from nodes"
    " where type in ('card', 'agent') and id is not null)")


@migrations()
def m016_revoke_removed_nodes_tokens(db: Database) -> None:
    """Service tokens of nodes removed by older code are revoked, once.

    Since 746df72 removing a card or agent revokes its tokens in the same write
    (SPEC §10.1: a card token acts only as that card); older code left them
    standing, so a node later given the id was acted as by them.
    """
    db.conn.execute(REVOKE_REMOVED_NODES_TOKENS.format(now="?"), [time.time()])


@migrations()
def m017_suppressed_pending_fed(db: Database) -> None:
    """A pending summary's creation is on the change feed (kind ``pending``, its key).

    SPEC §8 "Bounds" puts a card's ``suppressed`` row before that card's next
    row, and §10 holds it across every engine on the file: an engine writing
    the card's next row must know another engine's summary waits. Only the
    insert is fed; a flood of refusals replaces the row (its update) without a
    change each, and a key whose summary was written meanwhile costs the next
    row one read (`engine.services.record.Recorder.write_suppressed`).
    """
    db.execute("create trigger changes_suppressed_pending_insert after insert"
               " on suppressed_pending begin insert into changes (kind, key)"
               " values ('pending', new.key); end")


@migrations()
def m018_service_tokens_fed(db: Database) -> None:
    """A service token revoked or deleted is on the change feed (kind ``token``, its id).

    Every server on the file keeps a cache of the tokens it checked; a revocation
    through another server (``DELETE /v1/tokens/{id}``, or with its node, in the
    engine's write) must be refused by each at its next request (SPEC §10, §10.1).
    Each server's catch-up, which runs before it trusts its cache in a turn of its
    loop, reads these rows and drops the tokens named
    (`engine.store.tokenfeed.TokenFeed`). A token minted is not fed: an unknown
    token is never cached, so it is looked up in the table.
    """
    db.execute("create trigger changes_service_tokens_update after update on service_tokens"
               " begin insert into changes (kind, key) values ('token', old.id); end")
    db.execute("create trigger changes_service_tokens_delete after delete on service_tokens"
               " begin insert into changes (kind, key) values ('token', old.id); end")


@migrations()
def m019_prompts_in_play_index(db: Database) -> None:
    """A partial index on the prompts in play (queued, held, delivered), by position.

    Memory keeps those and the newest finished prompts only
    (`engine.core.prompt_memory`), and an open reads just them through this
    index instead of the whole table. It holds only the prompts in play, so
    it stays small and each prompt enters and leaves it once, not a b-tree
    of every prompt ever made (see m012).
    """
    db.execute("create index if not exists idx_prompts_in_play on prompts (position)"
               f" where {IN_PLAY_SQL}")


@migrations(makes=("prompt_budget",))
def m020_prompt_budget(db: Database) -> None:
    """Each workspace's prompt bucket, kept in the store (`engine.store.buckets`).

    SPEC §6 "Workspace budget", §10: every engine on the file paces delivery by
    one bucket, read and advanced under the write lock in the write that
    delivers. (Each engine kept one in memory: two engines delivered up to
    twice the budget, and a restart gave the workspace a full bucket.) No
    decision reads it, so it is on no change feed.
    """
    db.execute("create table prompt_budget (workspace TEXT PRIMARY KEY,"
               " level REAL NOT NULL, at REAL NOT NULL)")


@migrations(makes=("terminal_drivers",))
def m021_terminal_drivers(db: Database) -> None:
    """Which engine drives each terminal that has a real driver (its claim).

    A terminal's input is typed by the process whose driver runs it; another
    engine on the file has no driver for it and must not answer a card's
    ``terminals.run`` as done (SPEC §3, §10). It reads the claim under the write
    lock and refuses plainly. Written when a driver attaches, deleted with the
    engine's close, with the node, and once its ``process``
    (`engine.effects.processes.identity`) is known to be gone. No decision of the
    state reads it (it is read in the write that would type), so it is on no
    change feed.
    """
    db.execute("create table terminal_drivers (node TEXT PRIMARY KEY,"
               " engine TEXT NOT NULL, process TEXT, since REAL NOT NULL)")


@migrations()
def m022_terminal_claim_leases(db: Database) -> None:
    """Each terminal claim's lease: when it runs out by the store's clock (seconds).

    A claim whose process cannot be judged by its pid here (made in another
    container sharing the file, or where ``/proc`` cannot be read) was taken over
    by any attach, even while its process lived, which then drove the terminal
    unclaimed. The driving engine now renews its claims' leases, and such a claim
    is judged gone only once its lease ran out (`engine.services.claims`). Claims
    written before leases count as run out (0): an old engine renews none.
    """
    db.execute("alter table terminal_drivers add column expires REAL NOT NULL DEFAULT 0")


@migrations()
def m023_history_edits_fed(db: Database) -> None:
    """An old row of the log or the consent history updated or deleted is on the change
    feed (kind ``log`` or ``consent``, its ``seq``).

    The engine only appends to both; any other writer of the file (a ``sqlite3``
    shell, another tool) that edits or deletes a row moves neither table's newest
    ``seq`` nor, before this, the feed's: another engine's look
    (`engine.store.sqlite.SQLiteStore._leases_only`) took it for a lease renewal,
    and its live views (the log's, the grants') showed the old rows until the next
    change. `log verify` finds the edit itself; this only makes it seen. Inserts are
    not fed: an accepted call's row fires none of these triggers.
    """
    for table in ("log", "consent"):
        for event in ("update", "delete"):
            db.execute(f"create trigger changes_{table}_{event} after {event} on {table}"
                       f" begin insert into changes (kind, key) values ('{table}', old.seq);"
                       " end")


@migrations()
def m024_consent_by_package(db: Database) -> None:
    """An index of the consent history by the package each entry is about, then number.

    The history keeps every refused consent attempt (up to 120 a minute for each card
    and agent), so it grows without bound; a reader showing a package's newest entries
    (the TUI's grants screen) or paging through them (``GET /v1/history?package=``)
    reads them along this index from the end it wants, where it read and decoded the
    whole history. The expression is the reads' own (`history.PACKAGE_KEY`, written out
    here as a released step must never change), and NULL for a subject that is no JSON,
    so an entry altered by hand is still written.
    """
    db.execute("create index idx_consent_package on consent ((case when json_valid(subject)"
               " then json_extract(subject, '$.package') end), seq)")
