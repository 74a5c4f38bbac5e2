"""The PostgreSQL schema of the store: one migration chain, applied at open.

The tables are those of the SQLite file (engine/store/migrations.py m001–m007 and
canvas/migrations.py m001–m002, as they stand after the last of them) with
the same names and columns, so that the engine reads the same values from
either store:

- JSON is kept as ``text``, never ``jsonb``: the log's ``payload`` and
  ``chain``, the consent history's ``subject`` and a package's raw manifest
  are hashed or digested as the exact text stored, which ``jsonb`` would
  rewrite (key order, spacing, number forms); ``jsonb`` also refuses
  ``\\u0000``, which ``json.dumps`` writes for a NUL.
- Times are ``double precision`` (SQLite's REAL), so a time round-trips bit
  for bit and hashes the same. Counts, positions and sequence numbers are
  ``bigint``; ``consent.accepted`` stays an integer 0/1 because it is hashed
  as a number (a boolean would hash as ``true``).
- ``log.seq`` and ``consent.seq`` are plain ``bigint`` keys that the appender
  assigns as the newest plus one under the store's write lock
  (`engine.store.pg.batches`), not an identity: a sequence hands out numbers
  outside transactions, so a rolled back append would leave a gap that
  verification reports as a removed row.
- The ``grants`` column ``by`` is a reserved word in PostgreSQL: the store's
  SQL writes it quoted (``"by"``), which SQLite accepts too.

``changes`` (`changes`) is PostgreSQL's own: the numbered feed of consent
changes that engines follow with LISTEN/NOTIFY, one row per batch listing the
entities it touched, its newest rows kept (`engine.store.pg.batches.Batches._prune`)
(SQLite's feed of the same name is written by triggers, one row per changed row:
engine/store/migrations.py m010). Rows written by anyone
else (a ``psql`` shell) are fed by triggers too, one change per row (m011, m012):
the engine's own transactions are marked (`changes.ENGINE_MARK`) and passed by.

`migrate` applies the migrations a database lacks in one transaction, under
a transaction-scoped advisory lock, so any number of processes may open the
same database at once: the first applies them, the others wait and then find
nothing to do. ``schema_migrations`` records each applied migration by
position and name.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import Connection
from psycopg.pq import TransactionStatus

from engine.core.errors import StoreFailed
from engine.core.text import one_line
from engine.store.ahead import ahead_text
from engine.store.log import refuse_missing
from engine.store.migrations import REVOKE_REMOVED_NODES_TOKENS
from engine.store.orphans import orphan_repair
from engine.store.pg.changes import CHANNEL, ENGINE_SETTING
from engine.store.pg.holders import migrating
from engine.store.pg.locks import NAMESPACE, Lock, try_xact_lock, xact_lock
from engine.store.promptrows import IN_PLAY_SQL

__all__ = ["LEDGER", "MIGRATIONS", "Migration", "applied", "migrate", "missing_tables",
           "refuse_lost_ledger", "refuse_unknown"]

#: Where a wait for another process's migration is told (`migrate`).
_log = logging.getLogger("arrowgate.store")


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the chain: its name (never changed once released), its SQL, and
    what it does that SQL alone does not say (run after the statements)."""

    name: str
    statements: tuple[str, ...]
    run: Callable[[Connection[Any]], None] | None = None


#: The trigger function of m011: one change a statement that edited rows of ``log`` or
#: ``consent`` (kind ``state``, touching ``log`` or ``consent``: `loading.Touched`),
#: numbered and announced as `engine.store.pg.changes.record_change` does, under the
#: same locks in the same order (the write lock, then the feed's). The engine only
#: inserts into both tables, so its own writes never fire it. A statement that
#: touched no row records nothing.
def _record_change(kind: str, subject: str) -> str:
    """The body's end every trigger function below shares: one change of ``kind`` with
    ``subject`` (an SQL expression of its JSON), numbered and announced as
    `engine.store.pg.changes.record_change` does, under the same locks in the same
    order (the write lock, then the feed's); the function returns nothing."""
    return (f"  perform pg_advisory_xact_lock({NAMESPACE}, {int(Lock.WRITE)});"
            f"  perform pg_advisory_xact_lock({NAMESPACE}, {int(Lock.CHANGES)});"
            "  insert into changes (seq, t, kind, subject)"
            f"   select coalesce(max(seq), 0) + 1, extract(epoch from clock_timestamp()), '{kind}',"
            f"{subject}::text"
            "   from changes returning seq into number;"
            f"  perform pg_notify('{CHANNEL}', number::text);"
            "  return null;"
            " end $$")


_HISTORY_EDITED = (
    "create function arrowgate_history_edited() returns trigger language plpgsql as $$"
    " declare number bigint;"
    " begin"
    "  if tg_op <> 'TRUNCATE' then"
    "   if not exists (select 1 from gone) then return null; end if;"
    "  end if;"
    + _record_change("state", "    json_build_object('touched', json_build_array("
                     "     json_build_array(tg_table_name, null, null, null)))"))

#: m012's triggers' condition: the statement is not the engine's. Evaluated per row
#: before any work is queued, so the engine's writes queue no trigger call at all.
_BY_HAND = f"current_setting('{ENGINE_SETTING}', true) is distinct from '1'"

#: The tables the state is read from (`engine.store.loading`) and the service's tokens,
#: each with the change kind its rows are named by (`loading.Touched`) and its key
#: column, and the statements fed: SQLite's feed of the same tables (its m010, m018),
#: so both stores see the same edits. ``rates`` re-reads the windows; a token minted
#: is not fed (an unknown token is never cached: it is looked up).
_FED: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    *((table, kind, key, ("insert", "update", "delete")) for table, kind, key in (
        ("packages", "package", "name"), ("grants", "grants", "package"),
        ("workspaces", "workspace", "id"), ("nodes", "node", "id"),
        ("arrows", "arrow", "id"), ("prompts", "prompt", "id"),
        ("tool_calls", "tool_call", "id"), ("usage", "usage", "workspace"),
        ("secrets", "secrets", "name"), ("rate_events", "rates", "card"))),
    ("service_tokens", "token", "id", ("update", "delete")),
)

#: m012's lock taker: before a hand statement touches a row, the write lock, so a hand
#: edit waits for the engine's batch (and it for the edit) as batches wait for each
#: other, in one lock order (the write lock, then rows): never a deadlock between them.
_HAND_LOCK = (
    "create function arrowgate_hand_lock() returns trigger language plpgsql as $$"
    " begin"
    f"  perform pg_advisory_xact_lock({NAMESPACE}, {int(Lock.WRITE)});"
    "  return null;"
    " end $$")

#: m012's row trigger function: a row of a fed table inserted, updated or deleted by
#: a hand is one change (kind ``state``) naming its entity, ``[kind, key]``
#: (``TG_ARGV``), both keys when an update changed it, numbered and announced as
#: `engine.store.pg.changes.record_change` does, under the same locks in the same
#: order, so every engine's catch-up re-reads that entity. A key that is not text
#: (a NULL) is a change no catch-up can apply alone: that engine reloads in full.
_ROW_EDITED = (
    "create function arrowgate_row_edited() returns trigger language plpgsql as $$"
    " declare number bigint; keys text[];"
    " begin"
    "  if tg_op = 'INSERT' then keys := array[to_jsonb(new) ->> tg_argv[1]];"
    "  else"
    "   keys := array[to_jsonb(old) ->> tg_argv[1]];"
    "   if tg_op = 'UPDATE' and (to_jsonb(new) ->> tg_argv[1]) is distinct from keys[1] then"
    "    keys := keys || (to_jsonb(new) ->> tg_argv[1]);"
    "   end if;"
    "  end if;"
    + _record_change("state", "    json_build_object('touched', (select json_agg("
                     "json_build_array(tg_argv[0], k,"
                     "     null, null)) from unnest(keys) k))"))

#: m012's TRUNCATE trigger function: a fed table emptied is a change of kind ``reload``
#: (which rows went is not known): every engine reloads its whole state. The engine
#: never truncates.
_TABLE_EMPTIED = (
    "create function arrowgate_table_emptied() returns trigger language plpgsql as $$"
    " declare number bigint;"
    " begin"
    + _record_change("reload", "    json_build_object('table', tg_table_name)"))


def _fed_triggers() -> tuple[str, ...]:
    """m012's triggers on each table of `_FED`."""
    out: list[str] = []
    for table, kind, key, events in _FED:
        on = " or ".join(events)
        out.append(f"create trigger changes_{table}_hand_lock before {on} on {table}"
                   f" for each statement when ({_BY_HAND})"
                   " execute function arrowgate_hand_lock()")
        out.append(f"create trigger changes_{table}_edited after {on} on {table}"
                   f" for each row when ({_BY_HAND})"
                   f" execute function arrowgate_row_edited('{kind}', '{key}')")
        out.append(f"create trigger changes_{table}_truncate after truncate on {table}"
                   " for each statement execute function arrowgate_table_emptied()")
    return tuple(out)


MIGRATIONS: tuple[Migration, ...] = (
    # The SQLite schema as engine m007 and canvas m002 leave it.
    Migration("m001_schema", (
        # canvas m001, m002
        "create table workspaces (id text primary key, folder text, settings text)",
        "create table nodes (id text primary key, workspace text, type text, data text,"
        " position bigint)",
        "create index idx_nodes_workspace on nodes (workspace)",
        "create index idx_nodes_position on nodes (position)",
        "create table arrows (id text primary key, workspace text, src text, dst text,"
        " from_port text, to_port text)",
        "create index idx_arrows_workspace on arrows (workspace)",
        # engine m001
        "create table packages (name text primary key, state text, manifest text,"
        " digests text, hash text, pending_manifest text, pending_digests text,"
        " pending_hash text)",
        'create table grants (package text, permission text, t double precision, "by" text,'
        " primary key (package, permission))",
        "create table prompts (id text primary key, position bigint, workspace text,"
        " card text, package text, agent text, arrow text, call text, text text, chain text,"
        " state text, t double precision, deadline double precision, approver text,"
        " code text, reason text, message text)",
        "create index idx_prompts_state on prompts (state)",
        # engine m003
        "create index idx_prompts_position on prompts (position)",
        # The engine never names a rate event's id; it orders by it.
        "create table rate_events (id bigint generated always as identity primary key,"
        " card text, key text, t double precision)",
        # Each engine keeps the windows in memory (as on SQLite) and reads the
        # events back by time (`engine.store.loading`); this index finds a
        # removed card's events (`forget_rate_events`, `move_rate_events`).
        "create index idx_rate_events_window on rate_events (card, key, t)",
        # engine m001 and m005 (payload_bytes, payload_sha256)
        "create table log (seq bigint primary key, t double precision, workspace text,"
        " arrow text, card text, package text, version text, call text, target text,"
        " payload text, chain text, outcome text, code text, reason text, approver text,"
        " prompt text, prev text not null, hash text not null, payload_bytes bigint,"
        " payload_sha256 text)",
        "create index idx_log_arrow_seq on log (arrow, seq)",
        "create index idx_log_card_seq on log (card, seq)",
        # engine m001 and m004 (prev, hash, grants)
        "create table consent (seq bigint primary key, t double precision, principal text,"
        " action text, subject text, accepted integer, code text, reason text,"
        " detail text, prev text, hash text, grants text)",
        "create table usage (workspace text primary key, tokens bigint,"
        " cost double precision)",
        "create table meta (key text primary key, value text)",
        # engine m002
        "create table secrets (name text primary key, host text, value text,"
        " t double precision)",
        # engine m006
        "create table service_tokens (id text primary key, hash text, principal text,"
        " t double precision, revoked double precision)",
        "create unique index idx_service_tokens_hash on service_tokens (hash)",
        # engine m007
        "create table tool_calls (id text primary key, position bigint, workspace text,"
        " agent text, card text, package text, tool text, arrow text, args text, chain text,"
        " state text, t double precision, deadline double precision, result text, code text,"
        " reason text, message text, ended double precision)",
        "create index idx_tool_calls_state on tool_calls (state)",
        "create index idx_tool_calls_position on tool_calls (position)",
    )),
    # The change feed (SPEC §10 "Storage"): every consent change gets the next
    # number, in commit order, and NOTIFY carries it to the other engines.
    Migration("m002_changes", (
        "create table changes (seq bigint primary key, t double precision not null,"
        " kind text not null, subject text not null)",
    )),
    # No statement reads prompts by state (as SQLite's m012): one b-tree less to
    # write for every prompt saved.
    Migration("m003_no_prompt_state_index", (
        "drop index if exists idx_prompts_state",
    )),
    # Pending summaries of suppressed refusals, kept in the store so that a killed
    # engine loses no count (as SQLite's m014; `engine.store.pending`). No decision
    # reads them; a summary's creation is a batch's change all the same
    # (`PGStore.save_pending_summary`), so other engines write it first.
    Migration("m004_suppressed_pending", (
        "create table suppressed_pending (key text primary key, summary text not null)",
    )),
    # Spawn trees older code left naming a removed root (as SQLite's m015).
    Migration("m005_hand_on_orphaned_spawns", (), run=lambda conn: _hand_on_orphans(conn)),
    # Service tokens of nodes removed by older code (as SQLite's m016).
    Migration("m006_revoke_removed_nodes_tokens", (
        REVOKE_REMOVED_NODES_TOKENS.format(
            now="extract(epoch from clock_timestamp())::double precision"),
    )),
    # The prompts in play, by position: what an open reads of the prompts, with the
    # newest finished ones (as SQLite's m019; `engine.core.prompt_memory`).
    Migration("m007_prompts_in_play_index", (
        f"create index if not exists idx_prompts_in_play on prompts (position) where {IN_PLAY_SQL}",
    )),
    # Each workspace's prompt bucket, read and advanced under the write lock by
    # every engine that delivers (as SQLite's m020; `engine.store.buckets`).
    Migration("m008_prompt_budget", (
        "create table prompt_budget (workspace text primary key,"
        " level double precision not null, at double precision not null)",
    )),
    # Which engine drives each terminal with a real driver, read in the write that
    # would type into it (as SQLite's m021; `Store.terminal_driver`).
    Migration("m009_terminal_drivers", (
        "create table terminal_drivers (node text primary key,"
        " engine text not null, process text, since double precision not null)",
    )),
    # When each claim's lease runs out by the server's clock: a claim made on another
    # machine stands until then (as SQLite's m022; `engine.services.claims`).
    Migration("m010_terminal_claim_leases", (
        "alter table terminal_drivers add column expires double precision not null default 0",
    )),
    # An old row of the log or the consent history updated, deleted or truncated
    # outside the engine (as SQLite's m023): a change of the feed, so every engine's
    # live views are woken (`_HISTORY_EDITED`).
    Migration("m011_history_edits_fed", (
        _HISTORY_EDITED,
        *(f"create trigger changes_{table}_{event} after {event} on {table}"
          f" referencing old table as gone for each statement"
          " execute function arrowgate_history_edited()"
          for table in ("log", "consent") for event in ("update", "delete")),
        *(f"create trigger changes_{table}_truncate after truncate on {table}"
          " for each statement execute function arrowgate_history_edited()"
          for table in ("log", "consent")),
    )),
    # A row of a table the state is read from inserted, updated or deleted, or the
    # table truncated, outside the engine (as SQLite's m010 and m018 feed them): a
    # change every engine catches up on at its next call, so consent narrowed at a
    # shell is refused at once (SPEC §4.3). The engine's own writes, which it
    # records itself, are passed by (`ENGINE_MARK`).
    Migration("m012_hand_edits_of_state_fed", (
        _HAND_LOCK, _ROW_EDITED, _TABLE_EMPTIED, *_fed_triggers(),
    )),
    # The consent history by the package each entry is about, then number (as SQLite's
    # m024): a package's newest entries, or a page of them, read along it from the end
    # wanted, where the whole history was read. The function is the reads' own
    # (`engine.store.pg.parts.PG_PACKAGE_KEY`); it answers NULL for a subject that is no
    # JSON (an entry altered by hand), so no write of one fails.
    Migration("m013_consent_by_package", (
        "create function arrowgate_subject_package(subject text) returns text"
        " language plpgsql immutable as $$"
        " begin return subject::jsonb ->> 'package';"
        " exception when others then return null; end $$",
        "create index idx_consent_package on consent"
        " (arrowgate_subject_package(subject), seq)",
    )),
)

#: The migrations ledger: the table recording each applied step.
LEDGER = "schema_migrations"
_LEDGER = (f"create table if not exists {LEDGER} (position integer primary key,"
           " name text not null unique, applied_at double precision not null)")
#: SQLSTATEs of a step's statement finding the schema not as the step before left it
#: (a table, column, function, trigger or index already there; a table or column not
#: there). A step's own mistake (a type no server has) is left as the error it is.
_SCHEMA_CLASHES = frozenset({"42P07", "42710", "42723", "42701", "42P01", "42703"})


def applied(conn: Connection[Any]) -> list[str]:
    """Names of the migrations recorded in the database, in order ([] when none)."""
    exists = conn.execute("select to_regclass('schema_migrations') is not null").fetchone()
    if not exists or not exists[0]:
        return []
    return [str(r[0]) for r in
            conn.execute("select name from schema_migrations order by position").fetchall()]


def _tables_made(migrations: Sequence[Migration], done: set[str] | None = None) -> set[str]:
    """The tables ``migrations`` make (only those named in ``done``, when given), read
    from their own statements, so no list of names is kept apart from them."""
    made: set[str] = set()
    for migration in migrations:
        if done is not None and migration.name not in done:
            continue
        for statement in migration.statements:
            found = _TABLE_DDL.match(statement)
            if found is not None:
                (made.add if found[1].lower() == "create" else made.discard)(found[2])
    return made


def refuse_lost_ledger(conn: Connection[Any],
                       migrations: Sequence[Migration] = MIGRATIONS) -> None:
    """Refuse a store whose ledger was dropped or emptied while its tables stand.

    Only the engine writes the ledger, and it never empties it: tables of the store
    with no step recorded were left by an engine whose ledger someone removed. Running
    the chain on them would make the schema afresh on top of the one there (failing at
    the first table, or worse, at a step that does not fail); reading them as no store
    would call a store with rows in it empty. Nothing is written either way.

    Raises:
        StoreFailed: reason ``missing-table`` (the ledger dropped) or ``schema-mismatch``
            (the ledger there, recording nothing), naming it and the tables found.
    """
    if applied(conn):
        return
    present = {str(r[0]) for r in conn.execute(
        "select table_name from information_schema.tables"
        " where table_schema = current_schema()")}
    found = sorted(_tables_made(migrations) & present)
    if not found:
        return  # a new database (or another program's): nothing of a store in it
    shown = ", ".join(found[:5]) + (", …" if len(found) > 5 else "")
    if LEDGER not in present:
        refuse_missing([LEDGER])
    raise StoreFailed(f"the PostgreSQL store's migrations ledger {LEDGER} records no step, "
                      f"but the store's tables are there ({shown}): it was emptied outside "
                      "the engine, which never does so; the store cannot be opened until it "
                      "is restored, and nothing was written", reason="schema-mismatch")


#: A statement that makes or removes a table, and the table's name.
_TABLE_DDL = re.compile(r"^\s*(create|drop)\s+table\s+(?:if\s+(?:not\s+)?exists\s+)?(\w+)",
                        re.IGNORECASE)


def missing_tables(conn: Connection[Any],
                   migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """The tables the database's applied migrations made that its schema no longer
    has, sorted: only the engine makes and drops them, so one missing was removed
    outside it (`log verify` reports it). Read from the migrations' own statements,
    so no list of names is kept apart from them."""
    made = _tables_made(migrations, set(applied(conn)))
    present = {str(r[0]) for r in conn.execute(
        "select table_name from information_schema.tables"
        " where table_schema = current_schema()")}
    return sorted(made - present)


def migrate(conn: Connection[Any], migrations: Sequence[Migration] = MIGRATIONS, *,
            table_lock_wait: float | None = None) -> list[str]:
    """Bring the database's schema up to ``migrations``; returns the names applied now.

    All of it happens in one transaction of its own under the migrations
    lock: either every missing step is applied and recorded, or (on any
    error) none is and the database is as it was. The migrations lock is
    waited for as the connection's ``lock_timeout`` says (another process
    migrating); once it is had, a table another session holds locked is waited
    for no longer than ``table_lock_wait`` seconds, when given.

    Raises:
        ValueError: ``conn`` is inside a transaction already (the migrations
            must commit on their own), or ``migrations`` repeats a name.
        StoreFailed: the database records migrations this chain does not have
            at those positions (a newer engine's, or another schema), its ledger
            was removed or emptied while its tables stand (`refuse_lost_ledger`),
            or a step finds the schema not as the step before left it (reason
            ``schema-mismatch``, naming it): it is left untouched.
    """
    names = [m.name for m in migrations]
    if len(set(names)) != len(names):
        raise ValueError(f"migration names repeat: {names}")
    if conn.info.transaction_status != TransactionStatus.IDLE:
        raise ValueError("migrate runs its own transaction: call it with no transaction open")
    done: list[str] = []
    with conn.transaction():
        _wait_for_the_migrations_lock(conn)
        if table_lock_wait is not None:
            conn.execute(f"set local lock_timeout = '{max(1, int(table_lock_wait * 1000))}ms'")
        refuse_lost_ledger(conn, migrations)
        # Created under the lock: two first openers never race on creating it.
        conn.execute(_LEDGER)
        recorded = applied(conn)
        _refuse_other(recorded, names)
        for position, migration in enumerate(migrations):
            if position < len(recorded):
                continue
            _apply(conn, migration)
            conn.execute("insert into schema_migrations (position, name, applied_at)"
                         " values (%s, %s, %s)", [position, migration.name, time.time()])
            done.append(migration.name)
    return done


def _wait_for_the_migrations_lock(conn: Connection[Any]) -> None:
    """Take the migrations lock, waiting for another process's migration (as long as
    the connection's ``lock_timeout``) and saying so as the wait begins, naming who
    migrates and the bound, and when it ends: a start-up that waits minutes in
    silence looks hung, and is killed."""
    if try_xact_lock(conn, Lock.MIGRATIONS):
        return
    row = conn.execute("select extract(epoch from current_setting('lock_timeout')"
                       "::interval)::float8").fetchone()
    bound = float(row[0]) if row and row[0] else 0.0
    _log.warning("another process is migrating the PostgreSQL store (%s): waiting for it "
                 "to finish before opening it, %s", migrating(conn),
                 f"at most {bound:g} s" if bound > 0 else "with no bound")
    started = time.monotonic()
    xact_lock(conn, Lock.MIGRATIONS)
    _log.warning("the other process's migration of the PostgreSQL store ended after "
                 "%.1f s: opening it", time.monotonic() - started)


def _apply(conn: Connection[Any], migration: Migration) -> None:
    """Run one step's statements (in `migrate`'s transaction).

    Raises:
        StoreFailed: reason ``schema-mismatch``: a statement found the schema not as
            the step before left it (its ledger row removed while what it made stands,
            or an edited schema); the transaction rolls back, so nothing changes.
    """
    try:
        for statement in migration.statements:
            conn.execute(statement)
        if migration.run is not None:
            migration.run(conn)
    except psycopg.Error as exc:
        if exc.sqlstate not in _SCHEMA_CLASHES:
            raise  # a lost server, a lock: what it is, not the schema
        raise StoreFailed(
            f"the PostgreSQL database's migration {migration.name} cannot be applied "
            f"({one_line(str(exc))}): its ledger {LEDGER} lacks the step, but the schema differs from "
            "the one before it (a half-applied migration, or an edited ledger or schema); "
            "nothing was changed", reason="schema-mismatch") from exc


def refuse_unknown(conn: Connection[Any],
                   migrations: Sequence[Migration] = MIGRATIONS) -> None:
    """What `migrate` checks first, for a reader that never migrates (the log's
    verbs): the database's migrations are this chain's first ones, in order.

    An older store is read as it stands: upgrading it would record migrations
    that the older engines sharing it do not know, and each would refuse it.

    Raises:
        StoreFailed: reason ``schema-mismatch``, as `migrate` (nothing is written);
            a ledger removed or emptied as `refuse_lost_ledger`.
    """
    refuse_lost_ledger(conn, migrations)
    _refuse_other(applied(conn), [m.name for m in migrations])


def _refuse_other(recorded: list[str], names: list[str]) -> None:
    """Raise unless ``recorded`` is the start of ``names`` (see `migrate`)."""
    if recorded == names[:len(recorded)]:
        return
    if recorded[:len(names)] == names:
        raise StoreFailed(f"the PostgreSQL database cannot be opened: {ahead_text(recorded, names)}",
                          reason="schema-mismatch")
    extra = [n for n in recorded if n not in names]
    why = (f"it has migrations this engine does not know ({', '.join(extra)}): "
           "it was opened by a newer engine or holds another schema"
           if extra else
           f"its migrations {recorded} do not match this engine's {names}")
    raise StoreFailed(f"the PostgreSQL database cannot be opened: {why}",
                      reason="schema-mismatch")


def _hand_on_orphans(conn: Connection[Any]) -> None:
    """Hand on the spawn trees older code left naming a removed root, once
    (`engine.store.orphans`): its first live copy becomes the root and takes its
    windows, so a new node given the freed id starts afresh. Every engine reads
    the canvas and windows whole when it opens, after this."""
    repair = orphan_repair(
        [(str(i), str(t), d) for i, t, d in conn.execute("select id, type, data from nodes")],
        [str(c) for (c,) in conn.execute("select distinct card from rate_events"
                                         " where card is not null")])
    for node, data in repair.nodes:
        conn.execute("update nodes set data = %s where id = %s", [data, node])
    for gone, heir in repair.windows:
        if heir is None:
            conn.execute("delete from rate_events where card = %s", [gone])
        else:
            conn.execute("update rate_events set card = %s where card = %s", [heir, gone])
