"""PostgreSQL's log verified in spans on several processes finds what one pass finds (issue 19)."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from engine.store.log import Verification, join_spans
from engine.store.pg.parts import _check_pg_span, verify_pg_in_parallel
from engine.store.pg.schema import migrate
from tests.pg.logrows import append_log_row

ROWS = 30

CASES = {
    "untouched": None,
    "payload of a span's first row": "update log set payload = 'x' where seq = 11",
    "a span's last row deleted": "delete from log where seq = 20",
    "link of a span's first row": "update log set prev = 'y' where seq = 21",
}


@pytest.mark.parametrize("case", list(CASES))
def test_spans_on_postgresql_find_what_one_pass_finds(pg_dsn: str, case: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        migrate(conn)
        for i in range(ROWS):
            with conn.transaction():
                append_log_row(conn, {"t": 1000.0 + i, "card": "c1", "call": "notes.read",
                                      "payload": f"p{i}", "outcome": "ok",
                                      "chain": ("a1", "c1") if i % 2 else None})
        if CASES[case] is not None:
            conn.execute(CASES[case])
        conn.commit()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        one: Verification = join_spans([_check_pg_span(conn, 1, ROWS)])
    assert one.ok == (case == "untouched"), one
    spans: Any = verify_pg_in_parallel(pg_dsn, None, 1, ROWS, processes=3)
    assert spans == one
