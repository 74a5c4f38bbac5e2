"""An upgrade killed part-way leaves the older store as it was, for its code or a retry.

The store round 10's code built (tests/data/old_stores) is opened by this code in
another process, held inside its migration once some of the missing steps ran (SQLite's
m020, PostgreSQL's m008, each in the middle of what that store lacks) and killed there
(SIGKILL: no clean-up runs). Every step runs in one transaction, so the store is the
older one still, its schema and rows unchanged and its ledger recording none of the
steps, which its own code opens as it always did; and the next open upgrades it whole.
(About 1–2 s a store: a kill needs a process of its own, which imports the engine.)
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg

from engine import Engine, World
from engine.store.migrations import migrations
from engine.store.pg import schema
from tests.durability.oldstores import ledger, restore

ROOT = Path(__file__).parent.parent.parent

#: Run in the child: the step named in argv[2] runs, says so, and waits to be killed.
_STALLED_UPGRADE = """
import sys, time
from engine import Engine, World
where, step = sys.argv[1], sys.argv[2]

def stall() -> None:
    print("stalled", flush=True)
    time.sleep(60)

if where.startswith("postgresql://"):
    from engine.store.pg import schema
    apply = schema._apply
    def stalling(conn, migration):
        apply(conn, migration)
        if migration.name == step:
            stall()
    schema._apply = stalling
    Engine.open(store=where, world=World(net=None, fs=None))
else:
    from engine.store.migrations import Migration, migrations
    at = migrations.names.index(step)
    real = migrations.steps[at]
    def run(db):
        real.run(db)
        stall()
    migrations._steps[at] = Migration(real.name, run, real.was)
    Engine.open(where, world=World(net=None, fs=None))
"""


def _schema(kind: str, store: str) -> list[tuple[str, ...]]:
    """Every table, index and trigger with its definition, and each table's row count."""
    if kind == "sqlite":
        db = sqlite3.connect(store)
        try:
            made = sorted(db.execute("select type, name, coalesce(sql, '') from sqlite_master"))
            rows = [(name, str(db.execute(f"select count(*) from [{name}]").fetchone()[0]))
                    for kind_, name, _sql in made if kind_ == "table"]
            return [*made, *rows]
        finally:
            db.close()
    with psycopg.connect(store) as pg:
        made = sorted(pg.execute(
            "select 'table', table_name, '' from information_schema.tables"
            " where table_schema = 'public'"
            " union all select 'index', indexname, indexdef from pg_indexes"
            " where schemaname = 'public'"
            " union all select 'trigger', tgname, '' from pg_trigger where not tgisinternal"
        ).fetchall())
        rows = [(name, str(pg.execute(f"select count(*) from {name}").fetchone()[0]))
                for kind_, name, _sql in made if kind_ == "table"]
        return [*made, *rows]


def test_an_upgrade_killed_inside_its_transaction_changes_nothing(
        store: str) -> None:
    """Killed after some of the steps ran: the older store as it was; a retry upgrades it."""
    # GIVEN round 10's store, and its schema, rows and ledger as its code left them
    kind, _built = restore("r10", store)
    before, recorded = _schema(kind, store), ledger(kind, store)
    step = "m008_prompt_budget" if kind == "postgresql" else "m020_prompt_budget"
    # WHEN this code's upgrade is killed once that step has run, inside the transaction
    child = subprocess.Popen([sys.executable, "-c", _STALLED_UPGRADE, store, step],
                             cwd=ROOT, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert child.stdout is not None and child.stdout.readline() == "stalled\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.stdout is not None
        child.stdout.close()
    # THEN the store is the older one still: no step recorded, nothing made or changed
    assert ledger(kind, store) == recorded
    assert _schema(kind, store) == before
    # AND the next open upgrades it whole, and its log verifies
    world = World(net=None, fs=None)
    engine = (Engine.open(store=store, world=world) if kind == "postgresql"
              else Engine.open(store, world=world))
    try:
        if kind == "sqlite":
            assert migrations.behind(engine.store.db) == []
        else:
            assert ledger(kind, store) == [m.name for m in schema.MIGRATIONS]
        verified = engine.verify_log()
        assert verified.ok, verified.problem
    finally:
        engine.close()
