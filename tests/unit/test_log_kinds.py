"""Rows of a kind (`ArrowLog.append_kind`) and rows of a kind inserted many to a
statement (`ArrowLog.write_pending`): stored and hashed as `append_fields` does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Engine
from engine.store.log import FIELDS, GENESIS, ArrowLog, row_hash

_text = st.text(st.characters(codec="utf-8"), max_size=12)
_field = st.none() | _text


@settings(max_examples=80, deadline=None)
@given(st.lists(_field, min_size=7, max_size=7),  # workspace .. target
       st.lists(_field, min_size=5, max_size=5),  # outcome .. prompt
       st.lists(st.tuples(st.floats(allow_nan=False, allow_infinity=False)
                          .map(lambda x: x + 0.0), st.none() | _text), min_size=1, max_size=4))
def test_a_row_of_a_kind_is_the_row_append_fields_appends(before: list[Any], after: list[Any],
                                                           rows: list[Any]) -> None:
    """The same fields through `append_kind` and `append_fields`: the same insert,
    values and hash, row after row."""
    engine = Engine.open(None)
    try:
        assert engine.db is not None
        logs = ArrowLog(engine.db), ArrowLog(engine.db)
        engine.db.conn.execute("BEGIN IMMEDIATE")
        for log in logs:
            log.begin()
        kind = ArrowLog.row_kind([None, 0.0, *before, None, None, *after])
        assert kind is not None
        for t, payload in rows:
            logs[0].append_fields([None, t, *before, payload, None, *after])
            logs[1].append_kind(kind, t, payload)
        assert logs[0]._pending == logs[1]._pending
        assert logs[0].newest() == logs[1].newest()
        engine.db.conn.execute("ROLLBACK")
    finally:
        engine.close()


def test_a_row_of_a_kind_that_cannot_be_stored_changes_nothing() -> None:
    """A payload the hash cannot encode (a lone surrogate) fails its append, and the
    log stands as it was."""
    engine = Engine.open(None)
    try:
        assert engine.db is not None
        log = ArrowLog(engine.db)
        engine.db.conn.execute("BEGIN IMMEDIATE")
        log.begin()
        kind = ArrowLog.row_kind([None, 0.0, "w1", None, "c1", "p", None, "agents.prompt",
                                  "a1", None, None, "denied", "X", "y", None, None])
        assert kind is not None
        log.append_kind(kind, 1.0, "fine")
        tail = log.newest()
        with pytest.raises(UnicodeEncodeError):
            log.append_kind(kind, 2.0, "\udc80")
        assert log.newest() == tail and len(log._pending) == 1
        engine.db.conn.execute("ROLLBACK")
    finally:
        engine.close()


@pytest.mark.parametrize("committing", [True, False])
def test_rows_of_a_kind_go_in_many_to_a_statement(committing: bool) -> None:
    """37 rows of one kind, 5 of another and 1 of a third, interleaved: stored in
    order and hashed as appended, in a few statements rather than one a row."""
    engine = Engine.open(None)
    try:
        assert engine.db is not None
        conn = engine.db.conn
        log = ArrowLog(engine.db)
        statements: list[str] = []
        conn.execute("BEGIN IMMEDIATE")
        log.begin()
        kinds = ["a"] * 37 + ["b"] * 5 + ["c"]
        kinds[3], kinds[40] = kinds[40], kinds[3]  # interleaved
        expected = []
        for i, k in enumerate(kinds):
            values = [None, 1000.0 + i, "w1", None, f"card-{k}", "p", None, "agents.prompt",
                      "a1", f"text {i}" if k != "b" else None, None, "denied", "X", k,
                      None, None]
            log.append_fields(values)
            expected.append(dict(zip(FIELDS, values)))
        conn.set_trace_callback(statements.append)
        log.write_pending(committing=committing)
        conn.set_trace_callback(None)
        conn.execute("COMMIT")
        # 37 = 32 + 4 + 1, 5 = 4 + 1, 1; and a savepoint's two unless committing.
        inserts = [s for s in statements if s.startswith("insert")]
        assert len(inserts) == 6
        assert len(statements) == 6 + (0 if committing else 2)
        prev = GENESIS
        stored = conn.execute("select * from log order by seq")
        names = [d[0] for d in stored.description]
        for want, got in zip(expected, stored, strict=True):
            row = dict(zip(names, got))
            for name in FIELDS:
                assert row[name] == want[name]
            assert row["prev"] == prev and row["hash"] == row_hash(prev, row)
            prev = row["hash"]
        assert json.dumps(log.verify().to_json()) and log.verify().ok
    finally:
        engine.close()


@pytest.mark.parametrize("committing", [True, False])
def test_rows_left_to_the_commit_need_no_savepoint_of_their_own_there(committing: bool) -> None:
    """`DeferredRows.write` at the commit (whose failure rolls everything back) runs
    the rows' statements alone; elsewhere inside a savepoint, all or none."""
    from engine.store.deferred import DeferredRows

    engine = Engine.open(None)
    try:
        assert engine.db is not None
        conn = engine.db.conn
        rows = DeferredRows()
        for i in range(3):
            rows.add("rate_events", "insert or fail into rate_events (card, key, t) values "
                     "(?, ?, ?)", ("c1", "agents.prompt", 1000.0 + i))
        rows.add("meta", "insert or replace into meta (key, value) values (?, ?)", ("k", "v"))
        statements: list[str] = []
        conn.execute("BEGIN IMMEDIATE")
        conn.set_trace_callback(statements.append)
        rows.write(conn, committing=committing)
        conn.set_trace_callback(None)
        conn.execute("COMMIT")
        savepoints = [s for s in statements if s.startswith(("SAVEPOINT", "RELEASE"))]
        assert len(savepoints) == (0 if committing else 2)
        assert conn.execute("select count(*) from rate_events").fetchone()[0] == 3
        assert not rows.pending
    finally:
        engine.close()
