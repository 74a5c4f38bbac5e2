"""A store a newer arrowgate migrated is refused by this one naming both versions and
saying to upgrade arrowgate, on SQLite and on PostgreSQL, by every way in: the engine's
open (the service, the TUI, the write verbs), and the paths that only read (`log show`,
`log verify`, the TUI's verifier), without a byte written.

The refusal was there (round 30) but said "a newer engine upgraded it, or it holds
another schema; open it with that engine": no version of either side, and no word of
what to do but find "that engine". A user who upgraded one machine and then opened
the store from another needs to read: the store is at schema version 25, this
arrowgate (its version) reads up to 24, upgrade arrowgate. A store whose ledger names
a step in the middle of the chain that this code never had is no newer store (a
branch's build, another schema): it keeps the words that say so, with no advice to
upgrade that would not help.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from sqlite_utils import Database

from engine import Engine, World
from engine.app.cli import main
from engine.app.common import arrowgate_version
from engine.core.errors import StoreFailed
from engine.store import migrations as sqlite_chain
from engine.store.logindex import verify_path
from engine.store.pg.schema import MIGRATIONS as PG_CHAIN
from engine.store.pg.schema import applied
from engine.store.pg.store import PGStore
from engine.store.view import StoreView

NEWER = "m{:03d}_from_a_newer_arrowgate"


def _says_both_versions(text: str, known: list[str]) -> None:
    ahead = NEWER.format(len(known) + 1)
    assert f"schema version {len(known) + 1} ({ahead})" in text, text
    assert f"up to schema version {len(known)} ({known[-1]})" in text, text
    assert f"this arrowgate ({arrowgate_version()})" in text, text
    assert "upgrade arrowgate" in text, text


# ------------------------------------------------------------------ SQLite
def _sqlite_store_a_newer_arrowgate_migrated(tmp_path: Path) -> Path:
    path = tmp_path / "app.db"
    Engine.open(path, world=World(net=None, fs=None)).close()
    conn = sqlite3.connect(path)
    # What a newer arrowgate's next step leaves in the ledger: the step after this
    # chain's last (its schema change is beside the point: the ledger says the store is
    # ahead).
    conn.execute(f"insert into {sqlite_chain.LEDGER} (migration_set, name, applied_at)"
                 " values (?, ?, '2027-01-01 00:00:00+00:00')",
                 [sqlite_chain.SET, NEWER.format(len(sqlite_chain.migrations.names) + 1)])
    conn.commit()
    conn.close()
    return path


def test_sqlite_engine_open_names_both_versions_and_says_to_upgrade(tmp_path: Path) -> None:
    path = _sqlite_store_a_newer_arrowgate_migrated(tmp_path)
    before = path.read_bytes()
    with pytest.raises(StoreFailed) as raised:
        Engine.open(path, world=World(net=None, fs=None)).close()
    assert raised.value.reason == "schema-mismatch"
    _says_both_versions(str(raised.value), sqlite_chain.migrations.names)
    assert path.read_bytes() == before


def test_sqlite_read_only_paths_name_both_versions(tmp_path: Path, capsys) -> None:
    path = _sqlite_store_a_newer_arrowgate_migrated(tmp_path)
    before = path.read_bytes()
    known = sqlite_chain.migrations.names
    for verb in (["log", "verify"], ["log", "show"], ["log", "verify", "--json"]):
        assert main([*verb, "--db", str(path)]) == 2, verb
        _says_both_versions(capsys.readouterr().err, known)
    # The TUI's verifier and the read-only view the status verbs read.
    with pytest.raises(StoreFailed) as raised:
        verify_path(path)
    _says_both_versions(str(raised.value), known)
    with pytest.raises(StoreFailed) as raised:
        StoreView(path)
    _says_both_versions(str(raised.value), known)
    assert path.read_bytes() == before


def test_sqlite_a_step_this_code_never_had_mid_chain_is_no_newer_store(tmp_path: Path) -> None:
    """Not every step of this chain recorded, and one it does not know: another
    schema, not a newer arrowgate's; no advice to upgrade."""
    path = tmp_path / "app.db"
    db = Database(path)
    sqlite_chain.migrations.apply(db, stop_before=sqlite_chain.migrations.names[3])
    db.execute(f"insert into {sqlite_chain.LEDGER} (migration_set, name, applied_at)"
               " values (?, 'm004_of_a_branch', '2027-01-01 00:00:00+00:00')",
               [sqlite_chain.SET])
    db.conn.commit()
    with pytest.raises(StoreFailed, match="m004_of_a_branch") as raised:
        sqlite_chain.migrations.apply(db)
    db.close()
    assert "upgrade arrowgate" not in str(raised.value)
    assert "another schema" in str(raised.value)


# -------------------------------------------------------------- PostgreSQL
def _pg_store_a_newer_arrowgate_migrated(dsn: str, anchors: Path) -> list[str]:
    PGStore.open(dsn, anchors=anchors).close()
    with psycopg.connect(dsn) as conn:
        conn.execute("insert into schema_migrations (position, name, applied_at)"
                     " values (%s, %s, 0)",
                     [len(PG_CHAIN), NEWER.format(len(PG_CHAIN) + 1)])
        return applied(conn)


@pytest.mark.postgres
def test_pg_engine_open_names_both_versions_and_says_to_upgrade(
        pg_dsn: str, tmp_path: Path) -> None:
    before = _pg_store_a_newer_arrowgate_migrated(pg_dsn, tmp_path)
    with pytest.raises(StoreFailed) as raised:
        Engine.open(store=PGStore.open(pg_dsn, anchors=tmp_path),
                    world=World(net=None, fs=None)).close()
    assert raised.value.reason == "schema-mismatch"
    _says_both_versions(str(raised.value), [m.name for m in PG_CHAIN])
    with psycopg.connect(pg_dsn) as conn:
        assert applied(conn) == before


@pytest.mark.postgres
def test_pg_read_only_paths_name_both_versions(
        pg_dsn: str, tmp_path: Path, capsys) -> None:
    before = _pg_store_a_newer_arrowgate_migrated(pg_dsn, tmp_path)
    known = [m.name for m in PG_CHAIN]
    for verb in (["log", "verify"], ["log", "show"]):
        assert main([*verb, "--store", pg_dsn]) == 2, verb
        _says_both_versions(capsys.readouterr().err, known)
    with pytest.raises(StoreFailed) as raised:
        verify_path(pg_dsn)
    _says_both_versions(str(raised.value), known)
    with psycopg.connect(pg_dsn) as conn:
        assert applied(conn) == before
