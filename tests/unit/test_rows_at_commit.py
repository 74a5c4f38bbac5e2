"""Rows left to the commit (issue 19): an accepted prompt's rate event, prompt row and
agent's node data wait in memory and go in with the batch's commit (SQLite).

An operation that writes only such rows runs no statement and takes no
savepoint; one that fails forgets its own rows and keeps the others'; a
savepoint rolled back over a write made in its middle gives the earlier
operations' rows back; the rows are written before anything reads the state
back from the store.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from engine import Engine, World
from engine.core.errors import StoreFailed
from engine.store.deferred import DeferredRows
from engine.store.migrations import migrations

from ..conftest import manifest, offer_install

_INSERT = "insert into t (x) values (?)"


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("create table t (x integer)")
    return conn


def _rows(conn: sqlite3.Connection) -> list[int]:
    return [x for (x,) in conn.execute("select x from t order by rowid")]


def test_rows_wait_until_written_and_go_in_in_order() -> None:
    conn, rows = _db(), DeferredRows()
    conn.execute("BEGIN")
    for x in (1, 2, 3):
        rows.add("t", _INSERT, (x,))
    assert _rows(conn) == []
    rows.write(conn)
    assert _rows(conn) == [1, 2, 3] and not rows.pending


def test_a_tables_rows_keep_their_order_across_statements() -> None:
    """A row inserted, then replaced later in the batch by another statement: the insert
    goes first, whatever came between on other tables."""
    conn, rows = _db(), DeferredRows()
    conn.execute("create table u (id text primary key, state text)")
    conn.execute("BEGIN")
    rows.add("u", "insert or replace into u (id, state) values (?, ?)", ("p0", "replied"))
    rows.add("u", "insert or fail into u (id, state) values (?, ?)", ("p1", "queued"))
    rows.add("t", _INSERT, (1,))
    rows.add("u", "insert or replace into u (id, state) values (?, ?)", ("p1", "delivered"))
    rows.add("u", "insert or fail into u (id, state) values (?, ?)", ("p2", "queued"))
    rows.add("u", "insert or fail into u (id, state) values (?, ?)", ("p3", "queued"))
    rows.add("u", "insert or replace into u (id, state) values (?, ?)", ("p2", "held"))
    rows.write(conn)
    assert dict(conn.execute("select id, state from u")) == {
        "p0": "replied", "p1": "delivered", "p2": "held", "p3": "queued"}
    assert _rows(conn) == [1]


def test_a_failed_operation_forgets_its_rows_only() -> None:
    conn, rows = _db(), DeferredRows()
    conn.execute("BEGIN")
    rows.add("t", _INSERT, (1,))
    mark = rows.mark()
    rows.add("t", _INSERT, (2,))
    rows.back_to(mark, rolled_back=False)
    rows.write(conn)
    assert _rows(conn) == [1]


def test_a_rolled_back_savepoint_gives_back_the_rows_written_in_it() -> None:
    """Rows of earlier operations written in the middle of a later one (a read that
    needed them) go with that one's savepoint: they wait again, its own do not."""
    conn, rows = _db(), DeferredRows()
    conn.execute("BEGIN")
    rows.add("t", _INSERT, (1,))
    mark = rows.mark()
    conn.execute("SAVEPOINT op")
    rows.add("t", _INSERT, (2,))
    rows.write(conn)  # 1 and 2 are in, inside the savepoint
    rows.add("t", _INSERT, (3,))
    conn.execute("ROLLBACK TO op")
    conn.execute("RELEASE op")
    rows.back_to(mark, rolled_back=True)
    assert _rows(conn) == []
    rows.add("t", _INSERT, (4,))
    rows.write(conn)
    assert _rows(conn) == [1, 4]


def test_rows_that_fail_go_in_none_and_wait() -> None:
    conn, rows = _db(), DeferredRows()
    conn.execute("BEGIN")
    rows.add("t", _INSERT, (1,))
    rows.add("missing", "insert into missing (x) values (?)", (2,))
    with pytest.raises(sqlite3.OperationalError):
        rows.write(conn)
    assert _rows(conn) == [] and rows.pending
    rows.forget()
    assert not rows.pending


async def _world(path: Path) -> Engine:
    engine = Engine.open(path, world=World(net=None, fs=None))
    (path.parent / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", str(path.parent / "ws"))
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    for i in range(3):
        await engine.add_node({"id": f"c{i}", "type": "card", "package": "acme.prompter"},
                              workspace="w1")
        await engine.add_node({"id": f"a{i}", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": f"e{i}", "from": f"c{i}", "to": f"a{i}"})
    return engine


async def test_accepted_prompts_run_no_statement_until_their_commit(tmp_path: Path) -> None:
    """No savepoint, no insert or update while the prompts are decided: the rows go in
    at the commit, and what is stored is what memory holds."""
    engine = await _world(tmp_path / "a.db")
    try:
        assert engine.db is not None
        conn = engine.db.conn
        seen: list[str] = []
        conn.set_trace_callback(seen.append)
        try:
            results = await asyncio.gather(*(engine.call(
                f"c{i}", "agents.prompt", f"a{i}", {"text": f"hello {i}"}) for i in range(3)))
        finally:
            conn.set_trace_callback(None)
        assert [d.outcome for d in results] == ["queued"] * 3
        assert not any(s.startswith("SAVEPOINT op") for s in seen)
        writes = [i for i, s in enumerate(seen)
                  if s.startswith(("insert", "update", "delete"))]
        # Every write is the commit's: after the last statement the calls ran.
        begin = max(i for i, s in enumerate(seen) if not s.startswith(
            ("insert", "update", "delete", "SAVEPOINT", "RELEASE", "select max(seq)",
             "COMMIT")))
        assert writes and min(writes) > begin
        other = sqlite3.connect(tmp_path / "a.db")
        try:
            stored = dict(other.execute("select id, state from prompts"))
            data = dict(other.execute("select id, data from nodes where type = 'agent'"))
            events = other.execute("select count(*) from rate_events").fetchone()[0]
        finally:
            other.close()
        assert stored == {p.id: p.state for p in engine.prompts()}
        assert all('"status": "working"' in data[f"a{i}"] for i in range(3))
        assert events == 3
    finally:
        engine.close()


async def test_a_failure_after_a_statement_without_a_savepoint_fails_the_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An accepted prompt takes no savepoint; should a statement of its own have run
    before it fails, it cannot be undone alone: its batch fails whole (fail closed),
    and nothing of it is stored."""
    engine = await _world(tmp_path / "a.db")
    try:
        store = engine.store
        real = store.count_rate_event

        def count_then_fail(card: str, key: str, t: float) -> None:
            real(card, key, t)
            store.tx.write_deferred()  # type: ignore[attr-defined]  # a statement of its own
            raise sqlite3.OperationalError("disk I/O error (injected)")

        monkeypatch.setattr(store, "count_rate_event", count_then_fail)
        with pytest.raises(StoreFailed):
            await engine.call("c0", "agents.prompt", "a0", {"text": "lost"})
        monkeypatch.undo()
        assert engine.prompts() == []
        assert engine.db is not None
        assert engine.db.execute("select count(*) from rate_events").fetchone()[0] == 0
        assert engine.db.execute("select count(*) from prompts").fetchone()[0] == 0
        done = await engine.call("c0", "agents.prompt", "a0", {"text": "again"})
        assert done.outcome == "queued"
        assert engine.verify_log().ok
    finally:
        engine.close()


async def test_a_database_with_the_prompt_state_index_opens_and_verifies(
        tmp_path: Path) -> None:
    """A database of the schema before m012 keeps its prompts and its log, and loses
    only the index."""
    path = tmp_path / "a.db"
    engine = await _world(path)
    try:
        await engine.call("c0", "agents.prompt", "a0", {"text": "before"})
    finally:
        engine.close()
    conn = sqlite3.connect(path)
    conn.execute("create index idx_prompts_state on prompts (state)")
    conn.execute("delete from _sqlite_migrations where name = 'm012_no_prompt_state_index'")
    conn.commit()
    conn.close()
    engine = Engine.open(path, world=World(net=None, fs=None))
    try:
        assert engine.db is not None
        assert "m012_no_prompt_state_index" in migrations.applied(engine.db)
        indexes = {r[0] for r in engine.db.execute(
            "select name from sqlite_master where type = 'index' and tbl_name = 'prompts'")}
        assert "idx_prompts_state" not in indexes
        assert [p.text for p in engine.prompts()] == ["before"]
        assert engine.verify_log().ok
    finally:
        engine.close()
