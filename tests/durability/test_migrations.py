"""The store's schema is one migration chain: old databases upgrade in place, twice is once.

The fixtures in tests/data were made by the code from before the chains
merged (two sqlite-utils sets, ``engine`` and ``canvas``; see
tests/data/two-chain.md for how).

SQLite only, by nature: these are old SQLite files and SQLite's migration
ledger. PostgreSQL has a chain of its own, tested in tests/pg/test_schema.py
(applied once, part-way databases, failed migrations, four processes at once).
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database

from engine import Engine, World
from engine.app.replay import VirtualClock
from engine.service.auth import TokenStore
from engine.store.database import open_database
from engine.store.logkeys import KEYED
from engine.store.migrations import LEDGER, SET, Chain, migrations

DATA = Path(__file__).parent.parent / "data"
NAMES = ["m001_engine", "m002_secrets", "m003_prompt_position", "m004_consent_chain",
         "m005_log_payload_digest", "m006_service_tokens", "m007_tool_calls", "m008_canvas",
         "m009_node_position_index", "m010_changes", "m011_changes_pruned_at_commit",
         "m012_no_prompt_state_index", "m013_log_keys", "m014_suppressed_pending",
         "m015_hand_on_orphaned_spawns",
         "m016_revoke_removed_nodes_tokens", "m017_suppressed_pending_fed",
         "m018_service_tokens_fed", "m019_prompts_in_play_index", "m020_prompt_budget",
         "m021_terminal_drivers", "m022_terminal_claim_leases", "m023_history_edits_fed",
         "m024_consent_by_package"]
#: The steps the two chains had before they merged (the rest came after).
OLD = NAMES[:9]


def _copy(name: str, tmp_path: Path) -> Path:
    path = tmp_path / name
    shutil.copy(DATA / name, path)
    if (DATA / f"{name}.anchor").exists():
        shutil.copy(DATA / f"{name}.anchor", tmp_path / f"{name}.anchor")
    return path


def _schema(db: Database) -> set[tuple[str, str, str]]:
    """Every table and index but the ledger's, with the SQL that made it."""
    return {(kind, name, sql) for kind, name, sql in db.execute(
        "select type, name, sql from sqlite_master where name not like '%sqlite_migrations%'"
        " and sql is not null")}


def _ledger(db: Database) -> list[tuple[str, str, str]]:
    return [tuple(r) for r in db.execute(
        f"select migration_set, name, applied_at from {LEDGER} order by id")]


def _rows(db: Database) -> dict[str, list[Any]]:
    """Every row of every table but the ledger, in a fixed order."""
    tables = [r[0] for r in db.execute("select name from sqlite_master where type = 'table'"
                                       " and name not like '%sqlite_migrations%'")]
    # The log's side tables (`engine.store.logkeys`) have no rowid: ordered by key.
    return {t: db.execute(f"select * from [{t}] order by "
                          f"{'1, 2' if t in KEYED.values() else 'rowid'}").fetchall()
            for t in tables}


def test_the_chain_names_every_step_once_in_order() -> None:
    assert migrations.names == NAMES


async def test_a_database_of_the_two_chain_code_opens_with_its_data(tmp_path: Path) -> None:
    path = _copy("two-chain.sqlite", tmp_path)
    before = open_database(path)
    old_ledger, old_rows = _ledger(before), _rows(before)
    before.close()
    # Before its held prompt's deadline (1300), which an engine on a real clock would
    # expire at open (a row more); after its tool call's (1120), whose open chain
    # would refuse the prompt below as a cycle.
    engine = Engine.open(path, world=World(net=None, fs=None), clock=VirtualClock(1200.0))
    try:
        # Every step was adopted, none run again: the rows are as they were,
        # and each adopted step keeps the time it was applied.
        # (The change feed the newer steps add is new, and empty; the log's side
        # tables are new, and key every row of the log; no suppressed refusal is
        # pending, and no prompt bucket is stored: the old code kept them in memory;
        # no terminal is claimed: no driver runs yet.)
        rows = _rows(engine.db)
        rows["meta"] = [r for r in rows["meta"] if r[0] != "log_keyed"]
        assert rows["suppressed_pending"] == rows["prompt_budget"] == []
        assert rows["terminal_drivers"] == []
        assert {k: v for k, v in rows.items()
                if k not in ("changes", "suppressed_pending", "prompt_budget", "terminal_drivers",
                             *KEYED.values())} == old_rows
        for column, table in KEYED.items():
            assert rows[table] == sorted(
                (r[0], r[1]) for r in engine.db.execute(
                    f"select {column}, seq from log where {column} is not null"))
        ledger = _ledger(engine.db)
        assert ledger[:len(old_ledger)] == old_ledger
        old_times = {(s, n): t for s, n, t in old_ledger}
        assert [(s, n) for s, n, _t in ledger[len(old_ledger):]] == [(SET, n) for n in NAMES]
        assert [t for _s, _n, t in ledger[len(old_ledger):len(old_ledger) + len(OLD)]] == [
            old_times[step.was] for step in migrations.steps[:len(OLD)]]
        assert engine.verify_log().ok
        state = engine.state
        assert sorted(state.workspaces) == ["w1", "w2"]
        assert {n.id for n in state.canvas.nodes("w1")} == {"c1", "a1", "a2", "n1"}
        assert {a.id for a in state.canvas.arrows("w1")} == {"e1", "e2", "e3"}
        assert state.grants == {"acme.prompter": {"agents.prompt", "cards.connected"}}
        assert [(p.id, p.state) for p in engine.prompts()] == [("p1", "delivered"),
                                                                ("p2", "held")]
        assert list(state.tool_calls) == ["tc1"]
        assert state.usage == {"w1": (1200, 0.25)}
        assert engine.secret_is_set("api")
        assert engine.export_canvas("w2")["nodes"][0]["color"] == "2"  # extras in meta
        assert len(engine.log_rows()) == 4 and len(engine.history.entries()) == 13
        # It goes on working: a change is written, chained and verified.
        await engine.add_node({"id": "n2", "type": "note"}, workspace="w1")
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": "again"})).outcome \
            == "queued"
        assert engine.verify_log().ok
    finally:
        engine.close()
    tokens = TokenStore(path)
    try:
        token_id = open_database(path).execute("select id from service_tokens").fetchone()[0]
        assert tokens.principal_of(token_id) == "operator"
    finally:
        tokens.close()
    # Opened again, there is nothing left to do.
    db = open_database(path)
    ledger = _ledger(db)
    assert migrations.apply(db) == [] and _ledger(db) == ledger


def test_a_database_from_before_the_consent_chain_runs_only_what_it_lacks(
        tmp_path: Path) -> None:
    path = _copy("two-chain-partial.sqlite", tmp_path)
    db = open_database(path)
    assert migrations.applied(db) == NAMES[:3] + OLD[7:]
    assert migrations.apply(db) == NAMES[3:7] + NAMES[9:]
    assert [n for s, n, _t in _ledger(db) if s == SET] == \
        NAMES[:3] + OLD[7:] + NAMES[3:7] + NAMES[9:]
    # The consent chain's migration hashed the old entries in order.
    entries = db.execute("select seq, prev, hash from consent order by seq").fetchall()
    assert [e[0] for e in entries] == [1, 2] and entries[1][1] == entries[0][2]
    db.close()
    engine = Engine.open(path, world=World(net=None, fs=None))
    try:
        assert engine.verify_log().ok
        assert [n.id for n in engine.state.canvas.nodes("w1")] == ["n1"]
    finally:
        engine.close()


def test_the_chain_makes_the_schema_the_two_chain_code_made(tmp_path: Path) -> None:
    old = open_database(DATA / "two-chain.sqlite")
    try:
        expected = _schema(old)
    finally:
        old.close()
    fresh = open_database(tmp_path / "fresh.db")
    assert migrations.apply(fresh, stop_before=NAMES[len(OLD)]) == OLD
    assert _schema(fresh) == expected


def test_the_chain_is_idempotent(tmp_path: Path) -> None:
    db = open_database(tmp_path / "a.db")
    assert migrations.apply(db) == NAMES
    schema, ledger = _schema(db), _ledger(db)
    changes = db.conn.total_changes
    assert migrations.apply(db) == []
    assert migrations.apply(db, stop_before=None) == []
    # Up to date: nothing was written at all (no lock taken, no ledger row).
    assert db.conn.total_changes == changes
    assert (_schema(db), _ledger(db)) == (schema, ledger)
    with pytest.raises(ValueError, match="applied already"):
        migrations.apply(db, stop_before="m004_consent_chain")


def test_processes_opening_a_new_file_at_once_run_each_step_once(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    open_database(path).close()
    start = threading.Barrier(4)
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def opener() -> None:
        db = open_database(path)
        try:
            start.wait()
            results.append(migrations.apply(db))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            db.close()

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(results, key=len) == [[], [], [], NAMES]
    db = open_database(path)
    assert [n for _s, n, _t in _ledger(db)] == NAMES


def test_a_failing_step_leaves_the_schema_as_it_was(tmp_path: Path) -> None:
    chain = Chain()

    @chain(was=("old", "one"))
    def m001_one(db: Database) -> None:
        db.execute("create table one (x)")

    @chain(was=("old", "two"))
    def m002_two(db: Database) -> None:
        db.execute("create table two (x)")
        raise sqlite3.OperationalError("disk I/O error")

    db = open_database(tmp_path / "f.db")
    with pytest.raises(sqlite3.OperationalError):
        chain.apply(db)
    assert not db.conn.in_transaction
    assert db.table_names() == []  # neither step, nor the ledger
    with pytest.raises(ValueError, match="already"):
        chain(was=("old", "one"))(m001_one)
