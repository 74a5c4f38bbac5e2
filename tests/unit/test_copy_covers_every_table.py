"""`arrowgate copy` decides, for every table of either store, whether it is state (copied,
`engine.store.copying.COPIED`) or the store's own bookkeeping (`NOT_COPIED`): a table
a new migration makes is copied or left behind by a decision, never by being forgotten.
"""

from __future__ import annotations

from engine.store import migrations as sqlite_schema
from engine.store.copying import COPIED, NOT_COPIED
from engine.store.pg import schema as pg_schema


def test_every_table_of_both_stores_is_copied_or_named_as_bookkeeping() -> None:
    """Each table of the SQLite schema and of the PostgreSQL one is in exactly one list."""
    sqlite_tables = set(sqlite_schema._tables_made(sqlite_schema.migrations.steps))
    pg_tables = pg_schema._tables_made(pg_schema.MIGRATIONS) | {pg_schema.LEDGER}
    copied = {t.name for t in COPIED}
    assert not copied & set(NOT_COPIED)
    assert (sqlite_tables | pg_tables) - copied - set(NOT_COPIED) == set()
    # ... and every table copied is in both stores, so it is read and written alike
    assert copied <= sqlite_tables and copied <= pg_tables

