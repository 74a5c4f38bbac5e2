"""The log's rows by card and by arrow, through SQLite's side tables (`engine.store.logkeys`).

Every read by card or arrow must find exactly the rows a scan of the whole
log finds, whether they are keyed already or still in the log's unkeyed
tail, and after the log's end was cut back (tampering) and written again.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Engine, World, file_digests
from engine.store import transactions
from engine.store.log import rows_query
from engine.store.logfilter import LogFilter
from engine.store.logindex import open_log_index
from engine.store.logkeys import KEYED, has_keys, keyed_upto

DATA = Path(__file__).parent.parent / "data"
MANIFEST = {"name": "keys.test", "version": "1.0.0", "permissions": {"agents.prompt": {}}}
CARDS = [f"c{i}" for i in range(5)]
#: A small step, so that a test crosses many of them.
EVERY = 7


@pytest.fixture(autouse=True)
def _small_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transactions, "KEYS_EVERY", EVERY)


async def _canvas(path: Path) -> Engine:
    engine = Engine.open(path, world=World(net=None, fs=None))
    (path.parent / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", str(path.parent / "ws"),
                                  settings={"denial_log_limit": 1_000_000})
    await engine.offer("keys.test", MANIFEST,
                       file_digests({"manifest.json": json.dumps(MANIFEST, sort_keys=True)}))
    await engine.install("keys.test")
    await engine.add_node({"id": "agent", "type": "agent"}, workspace="w1")
    await engine.add_node({"id": "lonely", "type": "agent"}, workspace="w1")
    for card in CARDS:
        await engine.add_node({"id": card, "type": "card", "package": "keys.test"},
                              workspace="w1")
    # Two cards reach the agent: their prompts are accepted, logged on an arrow.
    await engine.add_arrow({"id": "e0", "from": "c0", "to": "agent"})
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "agent"})
    return engine


async def _calls(engine: Engine, n: int, first: int = 0) -> None:
    for i in range(first, first + n):
        card = CARDS[i * 7 % len(CARDS)]
        target = "agent" if card in ("c0", "c1") and i % 3 else "lonely"
        await engine.call(card, "agents.prompt", target, {"text": f"k{i}"})


def _scan(path: Path, column: str, value: str) -> list[int]:
    """The rows a scan of the whole log finds (no side table)."""
    conn = sqlite3.connect(path)
    try:
        return [s for (s,) in conn.execute(
            f"select seq from log where {column} = ? order by seq", [value])]
    finally:
        conn.close()


def _check(engine: Engine, path: Path) -> None:
    """Every way of reading by card and arrow agrees with the scan."""
    for column, values in (("card", [*CARDS, "agent", "nobody"]), ("arrow", ["e0", "e1", "e9"])):
        for value in values:
            expected = _scan(path, column, value)
            assert [r["seq"] for r in engine.log_rows(**{column: value})] == expected
            index = open_log_index(path, LogFilter(**{column: value}))
            try:
                assert index.refresh() == len(expected)
                assert [r["seq"] for r in index.page(0, len(expected))] == expected
                # A page in the middle reads only its span.
                if len(expected) > 4:
                    assert [r["seq"] for r in index.page(2, 4)] == expected[2:4]
                counts = index.timeline(3)[2]
                assert sum(map(sum, counts.values())) == len(expected)
            finally:
                index.close()


async def test_reads_by_card_and_arrow_find_keyed_and_unkeyed_rows_alike(tmp_path: Path) -> None:
    path = tmp_path / "keys.db"
    engine = await _canvas(path)
    try:
        seen: list[int] = []
        for step in range(6):
            await _calls(engine, 5, first=step * 5)
            seen.append(keyed_upto(engine.db.conn))
            _check(engine, path)
        newest = engine.log_rows()[-1]["seq"]
        # The keys were added in steps as rows gathered, never ahead of the log,
        # and what is left unkeyed is less than a step (plus one batch).
        assert seen == sorted(seen) and len(set(seen)) > 2
        assert 0 < newest - seen[-1] < EVERY + 5
        for column, table in KEYED.items():
            keyed = [tuple(r) for r in engine.db.execute(
                f"select {column}, seq from {table} order by {column}, seq")]
            assert keyed == sorted(tuple(r) for r in engine.db.execute(
                f"select {column}, seq from log where {column} is not null and seq <= ?",
                [seen[-1]]))
    finally:
        engine.close()


async def test_the_log_has_no_index_a_commit_writes_per_card(tmp_path: Path) -> None:
    """The side tables replace the log's indexes on card and on arrow."""
    engine = await _canvas(tmp_path / "keys.db")
    try:
        indexed = {r[2] for r in engine.db.execute("pragma index_list(log)")}
        assert indexed == set(), indexed
    finally:
        engine.close()


async def test_a_log_cut_back_and_written_again_is_read_right(tmp_path: Path) -> None:
    """Rows deleted from the log's end (tampering) leave keys past it: reopening sets
    them back, so the rows written after reuse their numbers without being hidden."""
    path = tmp_path / "keys.db"
    engine = await _canvas(path)
    await _calls(engine, 30)
    keyed = keyed_upto(engine.db.conn)
    engine.close()
    conn = sqlite3.connect(path)
    conn.execute("delete from log where seq > ?", [keyed - 10])
    conn.commit()
    conn.close()
    engine = Engine.open(path, world=World(net=None, fs=None))
    try:
        assert keyed_upto(engine.db.conn) == keyed - 10
        await _calls(engine, 12, first=100)
        _check(engine, path)
        # The tampering itself stays a finding.
        assert not engine.verify_log().ok
    finally:
        engine.close()


def test_the_condition_reads_the_side_table_within_its_bounds(tmp_path: Path) -> None:
    """Bounds given to the filter narrow the side table's part too (a viewer's page
    reads its span, not every row of the card)."""
    where, params = LogFilter(card="c1").where(after=10, upto=20, keyed=True)
    assert where.count("seq > ?") == 3 and where.count("seq <= ?") == 3
    assert params == [10, 20, "c1", 10, 20, 10, 20, "c1", "c1"]
    # With an arrow too, the arrow is the key and the card only checked.
    where, params = LogFilter(card="c1", arrow="e1").where(keyed=True)
    assert "log_arrows" in where and "log_cards" not in where
    # Without side tables (a file no newer engine opened), and on PostgreSQL, which
    # keeps its indexes: the plain condition.
    assert LogFilter(card="c1").where() == ("card = ?", ["c1"])
    assert LogFilter(card="c1").where("postgresql") == ("card = %s", ["c1"])
    # A viewer's positions under a filter of the card alone come from the side table.
    assert LogFilter(card="c1").sole_key == ("card", "c1")
    assert LogFilter(card="c1", outcome="denied").sole_key is None
    assert LogFilter(package="p").sole_key is None


async def test_rows_written_after_the_log_is_cut_while_the_engine_runs(tmp_path: Path) -> None:
    """The log's end is cut by another connection while an engine runs: the next commit
    sees it under the write lock and drops the keys past the cut, so the rows written
    after, which reuse those numbers, are read by key (found by review)."""
    path = tmp_path / "keys.db"
    engine = await _canvas(path)
    try:
        await _calls(engine, 30)
        keyed = keyed_upto(engine.db.conn)
        other = sqlite3.connect(path)
        other.execute("delete from log where seq > ?", [keyed - 5])
        other.commit()
        other.close()
        await _calls(engine, 40, first=100)
        _check(engine, path)
    finally:
        engine.close()


async def test_two_engines_on_one_file_read_every_row(tmp_path: Path) -> None:
    """Two engines, each with its own idea of what is keyed, write in turn."""
    path = tmp_path / "keys.db"
    a = await _canvas(path)
    b = Engine.open(path, world=World(net=None, fs=None))
    try:
        for step in range(12):
            await _calls(a if step % 2 else b, 4, first=step * 4)
            _check(a, path)
            _check(b, path)
        assert keyed_upto(a.db.conn) > 0
    finally:
        a.close()
        b.close()


def test_readers_of_a_file_no_newer_engine_opened_read_without_side_tables(
        tmp_path: Path) -> None:
    """The command line and a viewer open a file without migrating it: on one an older
    arrowgate wrote (no side tables) they read by the plain condition (found by review)."""
    db = tmp_path / "old.sqlite"
    db.write_bytes((DATA / "two-chain.sqlite").read_bytes())
    done = subprocess.run([sys.executable, "-m", "engine.app.cli", "log", "show", "--db",
                           str(db), "--card", "c1", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 4  # one JSON line a row
    index = open_log_index(db, LogFilter(card="c1", arrow="e1"))
    try:
        assert index.refresh() == 2
        assert [r["seq"] for r in index.page(0, 2)] == [1, 4]
    finally:
        index.close()
    index = open_log_index(db, LogFilter(card="c1"))  # the sole key: no side table either
    try:
        assert index.refresh() == 4
    finally:
        index.close()
    conn = sqlite3.connect(db)
    try:
        assert not has_keys(conn)  # read, not migrated
    finally:
        conn.close()


async def test_a_read_with_a_limit_stops_early_and_agrees(tmp_path: Path) -> None:
    """``rows(..., limit=n)`` reads the side table in order and stops at n (an ``IN``
    list read every row of the card first: found by review), with any other filter."""
    path = tmp_path / "keys.db"
    engine = await _canvas(path)
    try:
        await _calls(engine, 60)
        every = engine.log_rows()
        for filters in ({"card": "c0"}, {"arrow": "e1"}, {"card": "c1", "arrow": "e1"},
                        {"card": "c0", "outcome": "denied"},
                        {"card": "c2", "since": every[20]["t"], "until": every[50]["t"]}):
            expected = [r["seq"] for r in every if _meets(r, filters)]
            assert expected, filters
            for limit in (None, 1, 3, len(expected) + 5):
                got = [r["seq"] for r in engine.log_rows(**filters, limit=limit)]
                assert got == expected[:limit], (filters, limit)
        sql, params = rows_query("?", arrow=None, card="c0", package=None, outcome=None,
                                 call=None, since=None, until=None, limit=3, keyed=True)
        plan = " ".join(str(r[3]) for r in engine.db.execute(f"explain query plan {sql}",
                                                             params))
        assert "SEARCH k USING PRIMARY KEY (card=?" in plan and "LIST SUBQUERY" not in plan, plan
    finally:
        engine.close()


def _meets(row: dict[str, object], filters: dict[str, object]) -> bool:
    for name, value in filters.items():
        if name == "since":
            if row["t"] < value:  # type: ignore[operator]
                return False
        elif name == "until":
            if row["t"] > value:  # type: ignore[operator]
                return False
        elif row[name] != value:
            return False
    return True
