"""The stores older arrowgate code built (tests/data/old_stores), restored for a test."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from engine.store.anchor import Anchor, AnchorFile, AnchorState
from engine.store.pg import schema
from engine.store.pg.anchoring import local_anchor

__all__ = ["ledger", "restore"]

OLD = Path(__file__).parent.parent / "data" / "old_stores"


def restore(version: str, store: str) -> tuple[str, dict[str, Any]]:
    """The older store ``version`` restored at ``store`` (a new SQLite file or an empty
    PostgreSQL database) with its anchor; returns the store's kind (``sqlite`` or
    ``postgresql``) and what its build recorded (tests/data/old_stores/build.py)."""
    kind = "postgresql" if store.startswith("postgresql://") else "sqlite"
    recorded = json.loads((OLD / f"{version}.json").read_text())[kind]
    committed, history = recorded["anchor"]["committed"], recorded["anchor"]["history"]
    state = AnchorState(Anchor(*committed), None, Anchor(*history) if history else None)
    if kind == "sqlite":
        conn = sqlite3.connect(store)
        conn.executescript((OLD / f"{version}.sqlite.sql").read_text())
        conn.close()
        anchor = AnchorFile(store + ".anchor")
    else:
        with psycopg.connect(store, autocommit=True) as pg:
            pg.execute((OLD / f"{version}.pg.sql").read_text().encode())
        with psycopg.connect(store, autocommit=True) as pg:
            anchor = local_anchor(pg)
    anchor.write(state)
    anchor.close()
    return kind, recorded


def ledger(kind: str, store: str) -> list[str]:
    """The migrations ledger's entries, in order (SQLite's as ``set:name``)."""
    if kind == "sqlite":
        db = sqlite3.connect(store)
        try:
            return [f"{s}:{n}" for s, n in db.execute(
                "select migration_set, name from _sqlite_migrations order by id")]
        finally:
            db.close()
    with psycopg.connect(store) as pg:
        return schema.applied(pg)
