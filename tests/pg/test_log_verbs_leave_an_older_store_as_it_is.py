"""`arrowgate log show|export|verify --store URL` on a store an older engine made read it
as it stands and never migrate it: the older engines sharing it must still open it.

A reader that upgrades a shared store (a newer command line run once, by one
person, to look at the log) records migrations the team's older engines do not
know, and from then on each of them refuses the store ("it has migrations this
engine does not know") — a read that stops everyone's canvas. SQLite's log
verbs already read an older file read-only (tests/durability/test_verify_older_store.py).

Found in round 23: ``log verify --store`` (and ``log show``, ``log export``, the
TUI's verifier) applied the missing migrations before reading.
"""

from __future__ import annotations

import psycopg
import pytest

from engine.app.cli import main
from engine.store.logindex import verify_path
from engine.store.pg.schema import MIGRATIONS, applied, migrate

OLDER = [1, len(MIGRATIONS) - 1]


def _older_store(dsn: str, steps: int) -> list[str]:
    with psycopg.connect(dsn) as conn:
        migrate(conn, MIGRATIONS[:steps])
        return applied(conn)


def _applied(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        return applied(conn)


@pytest.mark.parametrize("steps", OLDER, ids=lambda n: f"{n} steps")
@pytest.mark.parametrize("verb", [["verify"], ["verify", "--json"], ["show"], ["export"]])
def test_a_log_verb_leaves_an_older_store_unmigrated(
        pg_dsn: str, capsys: pytest.CaptureFixture[str], verb: list[str], steps: int) -> None:
    before = _older_store(pg_dsn, steps)
    code = main(["log", verb[0], "--store", pg_dsn, *verb[1:]])
    captured = capsys.readouterr()
    assert code == 0, captured
    assert _applied(pg_dsn) == before


def test_the_verifier_leaves_an_older_store_unmigrated(pg_dsn: str) -> None:
    """The TUI's and the service's verifier (`verify_path` of the store's URL) too."""
    before = _older_store(pg_dsn, len(MIGRATIONS) - 1)
    assert verify_path(pg_dsn).ok
    assert _applied(pg_dsn) == before
