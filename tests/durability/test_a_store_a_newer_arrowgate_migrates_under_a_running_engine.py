"""A store a newer arrowgate migrates while this one has it open is refused from then on,
as it would be at open: every write fails closed naming both versions, and nothing is
written to it, on SQLite and on PostgreSQL.

The check at open (tests/durability/test_a_store_a_newer_arrowgate_migrated_names_both_
versions.py) is skipped by an engine already running: an `arrowgate serve` left up while
a newer arrowgate upgrades the store (`arrowgate upgrade` run after installing it, a
newer engine sharing the PostgreSQL database) went on answering calls and writing its
rows, in its own format, into a schema it does not know; the newer engine may hash or
key them otherwise, so its log and its decisions could be misjudged. Found in round 32.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from engine.app.common import arrowgate_version
from engine.core.errors import StoreFailed
from engine.store import migrations as sqlite_chain
from engine.store.pg.schema import MIGRATIONS as PG_CHAIN
from tests.conftest import notes_world

NEWER = "m{:03d}_from_a_newer_arrowgate"


def _migrate_as_a_newer_arrowgate(store: str) -> None:
    """What a newer arrowgate's next step does to the store: a table of its own, and the
    step in the ledger."""
    if store.startswith("postgresql://"):
        with psycopg.connect(store) as conn:
            conn.execute("create table newer_things (id text primary key)")
            conn.execute("insert into schema_migrations (position, name, applied_at)"
                         " values (%s, %s, 0)", [len(PG_CHAIN), NEWER.format(len(PG_CHAIN) + 1)])
        return
    conn = sqlite3.connect(store)
    conn.execute("create table newer_things (id text primary key)")
    conn.execute(f"insert into {sqlite_chain.LEDGER} (migration_set, name, applied_at)"
                 " values (?, ?, '2027-01-01 00:00:00+00:00')",
                 [sqlite_chain.SET, NEWER.format(len(sqlite_chain.migrations.names) + 1)])
    conn.commit()
    conn.close()


def _rows(store: str) -> int:
    if store.startswith("postgresql://"):
        with psycopg.connect(store) as conn:
            row = conn.execute("select count(*) from log").fetchone()
    else:
        conn = sqlite3.connect(store)
        row = conn.execute("select count(*) from log").fetchone()
        conn.close()
    assert row is not None
    return int(row[0])


async def test_an_engine_refuses_writes_once_a_newer_arrowgate_migrated_its_store(
        store: str, tmp_path: Path) -> None:
    # GIVEN an engine answering calls on a store
    engine = await notes_world(store, tmp_path, 1)
    try:
        decision = await engine.call("c0", "cards.note.append", "n1", {"text": "before"})
        assert decision.outcome == "ok", decision.message
        # WHEN a newer arrowgate migrates the store under it
        _migrate_as_a_newer_arrowgate(store)
        rows = _rows(store)
        # THEN its next call, and a revoke, fail closed naming both versions
        for attempt in range(2):
            with pytest.raises(StoreFailed) as raised:
                await engine.call("c0", "cards.note.append", "n1", {"text": f"after {attempt}"})
            assert raised.value.reason == "schema-mismatch", str(raised.value)
            text = str(raised.value)
            assert "newer_arrowgate" in text and "upgrade arrowgate" in text, text
            assert f"this arrowgate ({arrowgate_version()})" in text, text
        with pytest.raises(StoreFailed, match="upgrade arrowgate"):
            await engine.revoke("acme.notes", "cards.connected")
        # AND nothing of it was written
        assert _rows(store) == rows
    finally:
        engine.close()
