"""Each migration step says which tables it makes, and says it truly.

Rule: `Chain.missing_tables` (what ``arrowgate log verify`` and every verification report
as removed outside the engine) learns which tables a store's applied steps made from
each step's ``makes``, so that the verifier process need not run the steps on a scratch
database (which needs sqlite-utils, the most of what it imported: round 36). A step that
makes a table and does not say so would leave that table's removal unreported.
"""

from __future__ import annotations

import sqlite3

from sqlite_utils import Database

from engine.store.migrations import migrations


def _tables(db: Database) -> set[str]:
    return {str(r[0]) for r in db.execute(
        "select name from sqlite_master where type = 'table' and name not like 'sqlite%'")}


def test_each_step_makes_the_tables_it_says_and_drops_none() -> None:
    """Run in order on an empty database, each step adds exactly its ``makes``."""
    db = Database(sqlite3.connect(":memory:"))
    try:
        before: set[str] = set()
        for step in migrations.steps:
            step.run(db)
            after = _tables(db)
            assert (step.name, sorted(after - before)) == (step.name, sorted(step.makes))
            assert before <= after, f"{step.name} dropped {sorted(before - after)}"
            before = after
    finally:
        db.conn.close()


def test_a_store_missing_a_table_is_told_by_name(tmp_path) -> None:
    """A table a step made, dropped by hand, is named by `missing_tables`."""
    db = Database(sqlite3.connect(tmp_path / "a.db"))
    try:
        migrations.apply(db)
        assert migrations.missing_tables(db) == []
        db.execute("drop table terminal_drivers")
        db.execute("drop table log_cards")
        assert migrations.missing_tables(db) == ["log_cards", "terminal_drivers"]
    finally:
        db.conn.close()
