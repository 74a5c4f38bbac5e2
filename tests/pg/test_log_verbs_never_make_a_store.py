"""`arrowgate log show|export|verify --store URL` on a PostgreSQL database that holds no
arrowgate store refuse it and write nothing there, as ``--db`` refuses a file that is
not arrowgate's.

Reading the log must never change the database: a database of another program
(or an empty one, a typo in the URL) is no store, and a verdict of "ok: 0 rows"
on it would be unfounded.

Found in round 22: ``log verify --store`` on a database of another program
created arrowgate's twenty tables in it (opening the store applied every
migration) and answered "log verify: ok: 0 rows"; ``log show`` and ``log
export`` did the same, and so did the TUI's verifier (`verify_path`).
"""

from __future__ import annotations

import psycopg
import pytest

from engine.app.cli import main
from engine.core.errors import StoreFailed
from engine.store.logindex import verify_path


def _tables(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        return {r[0] for r in conn.execute(
            "select table_name from information_schema.tables where table_schema = 'public'")}


@pytest.mark.parametrize("theirs", [True, False], ids=["another program's", "empty"])
@pytest.mark.parametrize("verb", [["verify"], ["verify", "--json"], ["show"], ["export"]])
def test_log_verbs_never_make_a_store(pg_dsn: str, capsys: pytest.CaptureFixture[str],
                                      verb: list[str], theirs: bool) -> None:
    """Exit 2 naming the database as no arrowgate store; its tables are as they were."""
    if theirs:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("create table customers (id integer)")
    before = _tables(pg_dsn)
    code = main(["log", verb[0], "--store", pg_dsn, *verb[1:]])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "no arrowgate store" in captured.err, captured
    assert "ok" not in captured.out, captured
    assert _tables(pg_dsn) == before


def test_the_verifier_never_makes_a_store(pg_dsn: str) -> None:
    """The TUI's verifier (`verify_path` of a store's URL) refuses it too, writing nothing."""
    with pytest.raises(StoreFailed, match="no arrowgate store"):
        verify_path(pg_dsn)
    assert _tables(pg_dsn) == set()
