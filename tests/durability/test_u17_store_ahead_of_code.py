"""u17: a SQLite store whose migration ledger records a step this code does not know.

A store a newer arrowgate migrated (its ledger names a step after m013) is opened
by this code as if it were its own: no refusal, and the engine writes into a schema
it does not know. PostgreSQL refuses the same case (engine/store/pg/schema.py
`migrate`: StoreFailed reason ``schema-mismatch``, "it was opened by a newer engine
or holds another schema"). Spec silent; a careful user expects an older engine to
refuse a store a newer one upgraded, clearly and without writing to it, not to
misread it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import Engine, World
from engine.store.migrations import LEDGER, SET


def _store_from_a_newer_engine(tmp_path: Path) -> Path:
    path = tmp_path / "app.db"
    Engine.open(path, world=World(net=None, fs=None)).close()
    conn = sqlite3.connect(path)
    # What a newer engine's next step leaves in the ledger (its schema change is
    # beside the point: the ledger is what says the store is ahead).
    conn.execute(f"insert into {LEDGER} (migration_set, name, applied_at)"
                 " values (?, 'm014_from_a_newer_engine', '2027-01-01 00:00:00+00:00')", [SET])
    conn.commit()
    conn.close()
    return path


def test_a_store_whose_ledger_is_ahead_of_the_code_is_refused(tmp_path: Path) -> None:
    path = _store_from_a_newer_engine(tmp_path)
    before = path.read_bytes()
    with pytest.raises(Exception, match="m014_from_a_newer_engine"):
        Engine.open(path, world=World(net=None, fs=None)).close()
    assert path.read_bytes() == before
