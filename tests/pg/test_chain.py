"""The log's chain-head lock: one appender at a time, a linear chain with no gaps."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from engine.store.log import GENESIS, row_hash
from engine.store.pg.chain import ChainHead, append_log_row, lock_chain_head
from engine.store.pg.schema import migrate
from tests.pg.workers import append_many, run_all


@pytest.fixture
def conn(pg_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection to a migrated database."""
    with psycopg.connect(pg_dsn) as conn:
        migrate(conn)
        yield conn


def _verify(dsn: str) -> list[int]:
    """Check every row's link and hash as `ArrowLog.verify` does; returns the numbers."""
    with psycopg.connect(dsn, row_factory=dict_row) as conn:
        rows = conn.execute("select * from log order by seq").fetchall()
    prev, seqs = GENESIS, []
    for row in rows:
        assert row["prev"] == prev, f"row {row['seq']} does not link to the row before it"
        decoded = {**row, "chain": json.loads(row["chain"]) if row["chain"] else None}
        assert row_hash(prev, decoded) == row["hash"], f"row {row['seq']} does not match"
        prev = row["hash"]
        seqs.append(row["seq"])
    return seqs


def _row(**fields: Any) -> dict[str, Any]:
    return {"t": 1000.5, "card": "c1", "call": "notes.read", "payload": '{"a":1}',
            "outcome": "ok", **fields}


def test_rows_chain_from_genesis_and_verify(pg_dsn: str, conn: psycopg.Connection[Any]) -> None:
    with conn.transaction():
        assert lock_chain_head(conn) == ChainHead(0, GENESIS)
    with conn.transaction():
        first = append_log_row(conn, _row(chain=("a1", "c1")))
    with conn.transaction():
        second = append_log_row(conn, _row(payload="x" * 10, payload_bytes=9000,
                                           payload_sha256="ab" * 32, seq=77))
    assert first[:2] == (1, GENESIS)
    assert second[:2] == (2, first[2])  # a given seq is ignored
    with conn.transaction():
        assert lock_chain_head(conn) == ChainHead(2, second[2])
    assert _verify(pg_dsn) == [1, 2]
    stored = conn.execute("select chain, payload_bytes from log order by seq").fetchall()
    assert stored == [('["a1", "c1"]', None), (None, 9000)]


def test_a_rolled_back_append_leaves_no_gap(pg_dsn: str, conn: psycopg.Connection[Any]) -> None:
    with pytest.raises(RuntimeError), conn.transaction():
        append_log_row(conn, _row())
        raise RuntimeError("the decision failed after its row")
    with conn.transaction():
        assert append_log_row(conn, _row())[0] == 1
    assert _verify(pg_dsn) == [1]


def test_a_second_appender_waits_for_the_first(pg_dsn: str,
                                               conn: psycopg.Connection[Any]) -> None:
    conn.commit()
    got: list[tuple[int, str, str]] = []

    def second() -> None:
        with psycopg.connect(pg_dsn) as other, other.transaction():
            got.append(append_log_row(other, _row(card="c2")))

    with conn.transaction():
        mine = append_log_row(conn, _row())
        waiter = threading.Thread(target=second)
        waiter.start()
        waiter.join(timeout=0.5)
        assert waiter.is_alive() and got == []  # blocked on the chain head
    waiter.join(timeout=10)
    assert got and got[0][:2] == (2, mine[2])  # it appended after our committed row
    assert _verify(pg_dsn) == [1, 2]


def test_the_consent_chain_has_a_lock_of_its_own(conn: psycopg.Connection[Any]) -> None:
    with conn.transaction():
        conn.execute("insert into consent (seq, prev, hash) values (1, %s, 'h1')", [GENESIS])
    with conn.transaction():
        assert lock_chain_head(conn, "consent") == ChainHead(1, "h1")
        assert lock_chain_head(conn, "log") == ChainHead(0, GENESIS)


def test_bad_calls_append_nothing(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        migrate(conn)
        with pytest.raises(ValueError, match="inside the caller's transaction"):
            append_log_row(conn, _row())
        with conn.transaction():
            with pytest.raises(ValueError, match="not fields of a log row"):
                append_log_row(conn, _row(hash="forged"))
            with pytest.raises(ValueError, match="no such chain"):
                lock_chain_head(conn, "grants")  # type: ignore[arg-type]
        assert conn.execute("select count(*) from log").fetchone() == (0,)


def test_four_processes_appending_at_once_keep_one_chain(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        migrate(conn)
    results = run_all(append_many, (pg_dsn, 10), processes=4,
                      per_process=[(i,) for i in range(4)])
    assert sorted(s for seqs in results for s in seqs) == list(range(1, 41))
    assert _verify(pg_dsn) == list(range(1, 41))
