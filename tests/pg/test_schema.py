"""The PostgreSQL schema: the SQLite tables' equivalent, one chain, safe to open at once."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest

from engine.core.errors import StoreFailed
from engine.store.database import open_database
from engine.store.logkeys import KEYED
from engine.store.migrations import migrations
from engine.store.pg.schema import MIGRATIONS, Migration, applied, migrate
from tests.pg.workers import migrate_once, run_all

NAMES = [m.name for m in MIGRATIONS]
# SQLite's declared types and what each becomes here.
TYPES = {"TEXT": {"text"}, "INTEGER": {"bigint", "integer"}, "REAL": {"double precision"},
         "FLOAT": {"double precision"}}


def _pg_tables(conn: psycopg.Connection[Any]) -> dict[str, dict[str, str]]:
    tables: dict[str, dict[str, str]] = {}
    for table, column, kind in conn.execute(
            "select table_name, column_name, data_type from information_schema.columns"
            " where table_schema = 'public' order by table_name, ordinal_position"):
        tables.setdefault(table, {})[column] = kind
    return tables


def _pg_indexes(conn: psycopg.Connection[Any]) -> set[tuple[str, tuple[str, ...], bool]]:
    rows = conn.execute(
        "select t.relname, array_agg(a.attname order by k.n), ix.indisunique"
        " from pg_index ix join pg_class t on t.oid = ix.indrelid"
        " join pg_namespace ns on ns.oid = t.relnamespace and ns.nspname = 'public'"
        " cross join lateral unnest(ix.indkey) with ordinality as k(attnum, n)"
        " join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum"
        " where not ix.indisprimary group by t.relname, ix.indexrelid, ix.indisunique")
    return {(t, tuple(cols), unique) for t, cols, unique in rows}


def _pg_index_names(rows: list[tuple[str]]) -> set[str]:
    return {str(r[0]) for r in rows}


def _sqlite_schema() -> Any:
    db = open_database(None)
    migrations.apply(db)
    return db


def test_migrate_creates_the_sqlite_tables_with_the_same_columns(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        assert migrate(conn) == NAMES
        tables = _pg_tables(conn)
        indexes = _pg_indexes(conn)
        conn_names = conn.execute("select indexname from pg_indexes"
                                  " where schemaname = 'public'").fetchall()
    sqlite = _sqlite_schema()
    for name in sqlite.table_names():
        if name.startswith("_sqlite"):
            continue
        if name == "changes":
            # Each store's change feed has its own shape: SQLite's rows are
            # written one per changed row by triggers; PostgreSQL's, one per
            # batch by the engine, numbered under a lock and NOTIFYed.
            assert "changes" in tables
            continue
        if name in KEYED.values():
            # SQLite finds a card's or an arrow's rows through side tables filled
            # in bulk (engine.store.logkeys); PostgreSQL keeps its indexes on the
            # log (card, seq) and (arrow, seq), checked below.
            continue
        assert name in tables, f"table {name} is missing on PostgreSQL"
        columns = {c.name: c.type for c in sqlite[name].columns}
        assert list(tables[name]) == list(columns), name  # same names, same order
        for column, kind in columns.items():
            assert tables[name][column] in TYPES[kind], (name, column, tables[name][column])
        for index in sqlite[name].indexes:
            if index.name.startswith("sqlite_autoindex"):
                continue
            if None in index.columns:
                # An index on an expression (the consent history's by package): each
                # store's own function of the column, under the same name.
                assert index.name in _pg_index_names(conn_names), (name, index)
                continue
            assert (name, tuple(index.columns), bool(index.unique)) in indexes, (name, index)
    for column in KEYED:
        assert ("log", (column, "seq"), False) in indexes, column
    # Only PostgreSQL has its migration ledger (the change feed both have, above).
    assert set(tables) - set(sqlite.table_names()) == {"schema_migrations"}


def test_values_the_engine_hashes_come_back_exactly(pg_dsn: str) -> None:
    subject = json.dumps({"package": "acme.notes", "nul": "a\x00b", "é": 1}, sort_keys=True)
    t = 1000.1 + 1e-9
    with psycopg.connect(pg_dsn) as conn:
        migrate(conn)
        conn.execute('insert into grants (package, permission, t, "by") values (%s, %s, %s, %s)',
                     ["acme.notes", "notes.read", t, "operator"])
        conn.execute("insert into consent (seq, t, principal, action, subject, accepted)"
                     " values (1, %s, 'operator', 'grant', %s, 1)", [t, subject])
        grant = conn.execute('select package, permission, t, "by" from grants').fetchone()
        entry = conn.execute("select t, subject, accepted from consent").fetchone()
    assert grant == ("acme.notes", "notes.read", t, "operator")
    assert entry == (t, subject, 1)
    assert type(entry[2]) is int  # hashed as 1, never as true


def test_opening_again_applies_nothing(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        assert migrate(conn) == NAMES
        assert migrate(conn) == []
        assert applied(conn) == NAMES


def test_a_database_part_way_up_the_chain_gets_only_the_rest(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        assert migrate(conn, MIGRATIONS[:1]) == NAMES[:1]
        assert "changes" not in _pg_tables(conn)
        conn.commit()  # end the reading transaction: migrate runs its own
        assert migrate(conn) == NAMES[1:]
        assert "changes" in _pg_tables(conn)


def test_a_failing_migration_leaves_the_database_as_it_was(pg_dsn: str) -> None:
    chain = [MIGRATIONS[0], Migration("m002_broken", ("create table x (y no_such_type)",))]
    with psycopg.connect(pg_dsn) as conn:
        with pytest.raises(psycopg.errors.UndefinedObject):
            migrate(conn, chain)
        conn.rollback()
        assert _pg_tables(conn) == {}  # not even m001 or the ledger
        assert applied(conn) == []


@pytest.mark.parametrize("recorded", [
    [*NAMES, "m099_from_a_newer_engine"],
    [NAMES[0], "m002_something_else"],
])
def test_a_database_with_other_migrations_is_refused_untouched(
        pg_dsn: str, recorded: list[str]) -> None:
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("create table schema_migrations (position integer primary key,"
                     " name text not null unique, applied_at double precision not null)")
        for i, name in enumerate(recorded):
            conn.execute("insert into schema_migrations values (%s, %s, 0)", [i, name])
        conn.commit()
        with pytest.raises(StoreFailed, match="cannot be opened") as caught:
            migrate(conn)
        assert caught.value.reason == "schema-mismatch"
        assert set(_pg_tables(conn)) == {"schema_migrations"}
        assert applied(conn) == recorded


def test_migrate_refuses_to_run_inside_a_transaction(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("select 1")  # opens a transaction (not autocommit)
        with pytest.raises(ValueError, match="no transaction open"):
            migrate(conn)
        conn.rollback()
        assert applied(conn) == []


def test_a_chain_that_repeats_a_name_is_refused(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn, pytest.raises(ValueError, match="repeat"):
        migrate(conn, [MIGRATIONS[0], MIGRATIONS[0]])


def test_four_processes_opening_at_once_migrate_once(pg_dsn: str) -> None:
    results = run_all(migrate_once, (pg_dsn,), processes=4)
    assert sorted(results, key=len) == [[], [], [], NAMES]
    with psycopg.connect(pg_dsn) as conn:
        assert applied(conn) == NAMES
