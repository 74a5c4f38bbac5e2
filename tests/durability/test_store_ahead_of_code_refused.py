"""A SQLite store whose migration ledger records a step this code does not know is refused.

A store a newer arrowgate migrated (its ledger names a step after this chain's last)
is refused at open, clearly (`StoreFailed`, reason ``schema-mismatch``, naming the
unknown steps) and without a byte written, as the PostgreSQL store refuses the same
case (engine/store/pg/schema.py `migrate`). The read-only verbs refuse it too (exit 2,
not 1: no finding about the store is made): the newer schema may hash or key rows as
this code does not, so what `log show` showed, and `log verify`'s verdict, would be
unfounded. (Found by a helper: such a store opened silently and was written to.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import Engine, World
from engine.app.cli import main
from engine.core.errors import StoreFailed
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
    with pytest.raises(StoreFailed, match="m014_from_a_newer_engine") as raised:
        Engine.open(path, world=World(net=None, fs=None)).close()
    assert raised.value.reason == "schema-mismatch"
    assert path.read_bytes() == before


@pytest.mark.parametrize("verb", [["log", "verify"], ["log", "show"], ["log", "export"]])
def test_the_read_only_verbs_refuse_it_too(tmp_path: Path, capsys, verb: list[str]) -> None:
    path = _store_from_a_newer_engine(tmp_path)
    before = path.read_bytes()
    code = main([*verb, "--db", str(path)])
    captured = capsys.readouterr()
    assert code == 2, captured.out + captured.err
    assert "m014_from_a_newer_engine" in captured.err
    assert "newer engine" in captured.err
    assert path.read_bytes() == before
