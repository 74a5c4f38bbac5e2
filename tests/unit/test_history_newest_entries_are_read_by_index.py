"""The consent history's newest entries (of one package, or of all) and how many there
are are read from the end, through an index, on SQLite as on PostgreSQL (rule: a reader
that shows the end of a history that grows without bound reads only that end).

(Found in round 31: the TUI's grants screen read a package's whole history, decoded
every entry, to show its newest 200; refused consent attempts are kept there, up to 120
a minute for each card and agent, so 80,000 of them took seconds and hundreds of MB.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from engine.store.history import (
    LATEST_OF_ALL_SQL,
    LATEST_OF_PACKAGE_SQL,
    PACKAGE_COUNT_SQL,
)
from engine.store.migrations import migrations
from engine.store.pg.parts import (
    PG_LATEST_OF_ALL_SQL,
    PG_LATEST_OF_PACKAGE_SQL,
    PG_PACKAGE_COUNT_SQL,
)
from tests.conftest import manifest, offer_install, open_store


async def _history(engine: Any, store: str) -> None:
    """Two packages' grants and revokes, interleaved: some ten entries of each."""
    await engine.create_workspace("w1", str(Path(store).parent)
                                  if not store.startswith("postgresql") else "/tmp")
    for name in ("acme.a", "acme.b"):
        await offer_install(engine, manifest(name, {"clipboard.write": {"optional": True}}))
    for _ in range(4):
        for name in ("acme.a", "acme.b"):
            await engine.grant(name, "clipboard.write")
            await engine.revoke(name, "clipboard.write")


async def test_the_newest_entries_are_read_newest_first_on_either_store(store: str) -> None:
    """``latest(n)``: the newest n entries, newest first, of one package or of all;
    ``count()`` how many there are; the same entries `entries` reads in order."""
    # GIVEN a history of two packages
    engine = open_store(store)
    try:
        await _history(engine, store)
        every = engine.history.entries()
        theirs = [e for e in every if e["subject"].get("package") == "acme.a"]
        assert len(theirs) >= 9 and len(every) > len(theirs)
        # WHEN its end is read THEN it is the end of the whole, newest first
        assert engine.history.latest(3) == every[::-1][:3]
        assert engine.history.latest(4, package="acme.a") == theirs[::-1][:4]
        assert engine.history.latest(len(every) + 5) == every[::-1]
        assert engine.history.latest(100, package="acme.a") == theirs[::-1]
        assert engine.history.latest(5, package="no.such") == []
        assert engine.history.latest(0) == [] and engine.history.latest(-1) == []
        assert engine.history.count() == len(every)
        assert engine.history.count(package="acme.a") == len(theirs)
        assert engine.history.count(package="no.such") == 0
        # AND a package's entries read in order are read through the same index
        assert engine.history.entries(package="acme.a", after=theirs[2]["seq"],
                                      limit=3) == theirs[3:6]
    finally:
        engine.close()


async def test_an_entry_altered_by_hand_is_read_as_it_stands(tmp_path: Path) -> None:
    """An entry whose subject is no JSON object (edited in a shell) is read flagged, as
    `entries` reads it, and counted with the whole; never under a package it does not
    name, and never an error."""
    # GIVEN a history with entries altered by hand
    store = str(tmp_path / "arrowgate.db")
    engine = open_store(store)
    try:
        await _history(engine, store)
        count = engine.history.count()
    finally:
        engine.close()
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("update consent set subject = 'not json' where seq = ?", [count])
        conn.execute("update consent set subject = '{\"package\": 5}' where seq = ?",
                     [count - 1])
    conn.close()
    engine = open_store(store)
    try:
        # WHEN the end is read THEN the altered entries are there, flagged, of no package
        newest = engine.history.latest(2)
        assert [e["seq"] for e in newest] == [count, count - 1]
        assert newest == engine.history.entries(after=count - 2)[::-1]
        assert all(e["seq"] < count - 1 for e in engine.history.latest(50, package="5"))
        assert engine.history.count() == count
    finally:
        engine.close()


def _sqlite_plan(sql: str, params: list[Any]) -> str:
    conn = sqlite3.connect(":memory:")
    try:
        migrations.apply(Database(conn))
        return "\n".join(str(r[-1]) for r in conn.execute(f"explain query plan {sql}", params))
    finally:
        conn.close()


def test_sqlite_reads_the_end_through_an_index() -> None:
    """A package's newest entries and its count are read through its index, the
    newest of all backwards along the key: no whole scan, no sort."""
    for sql, params in ((LATEST_OF_PACKAGE_SQL, ["acme.a"]),
                        (PACKAGE_COUNT_SQL, ["acme.a"])):
        plan = _sqlite_plan(sql, params)
        assert "INDEX idx_consent_package" in plan, (sql, plan)
        assert "TEMP B-TREE" not in plan, (sql, plan)
    # The key's order read from its end, stopping at the limit (SQLite calls it a scan).
    plan = _sqlite_plan(LATEST_OF_ALL_SQL, [])
    assert plan == "SCAN consent", plan


def test_postgres_reads_the_end_through_an_index(pg_dsn: str) -> None:
    """As on SQLite: with sequential scans priced out, the plan is an index's (a
    sequential scan is chosen however priced when no index answers)."""
    engine = open_store(pg_dsn)
    try:
        conn = engine.history.link.conn
        with conn.transaction():
            conn.execute("set local enable_seqscan = off")
            conn.execute("set local enable_sort = off")
            for sql, params in ((PG_LATEST_OF_PACKAGE_SQL, ["acme.a", 2**63 - 1, 10]),
                                (PG_LATEST_OF_ALL_SQL, [2**63 - 1, 10]),
                                (PG_PACKAGE_COUNT_SQL, ["acme.a"])):
                plan = "\n".join(str(r[0]) for r in conn.execute(f"explain {sql}", params))
                assert "Index" in plan, (sql, plan)
                assert "Seq Scan" not in plan and "Sort" not in plan, (sql, plan)
    finally:
        engine.close()
