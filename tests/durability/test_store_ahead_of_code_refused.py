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


#: Steps builds of branches recorded under the sets from before the chains merged, which
#: the merged chain never knew: the service's tokens were m004 and then m005 on the
#: branches that made them (0eb69df, f3a533b), the tool calls m006 (9559a5d), before
#: the merge numbered them m006 and m007. The last is what any other schema might record.
_OLD_SET_STEPS = [
    ("engine", "m004_service_tokens",
     "create table service_tokens (id text primary key, hash text, principal text,"
     " t float, revoked float)"),
    ("canvas", "m003_from_a_branch", None),
]


@pytest.mark.parametrize(("kind", "name", "made"), _OLD_SET_STEPS)
def test_a_step_recorded_under_an_old_set_that_this_code_never_knew_is_refused(
        tmp_path: Path, capsys, kind: str, name: str, made: str | None) -> None:
    """A ledger entry of the sets from before the merge that no step here was is refused,
    named, and nothing is written: the store holds a schema this code does not know."""
    # GIVEN a database of the two sets' time whose ledger records a step of theirs that
    # this chain has never heard of
    path = tmp_path / "app.db"
    path.write_bytes((Path(__file__).parent.parent / "data" / "two-chain-partial.sqlite")
                     .read_bytes())
    conn = sqlite3.connect(path)
    if made is not None:
        conn.execute(made)
    conn.execute(f"insert into {LEDGER} (migration_set, name, applied_at)"
                 " values (?, ?, '2026-12-03 16:00:00+00:00')", [kind, name])
    conn.commit()
    conn.close()
    before = path.read_bytes()
    # WHEN the engine opens it, THEN it is refused naming the step, as a newer one is
    with pytest.raises(StoreFailed, match=name) as raised:
        Engine.open(path, world=World(net=None, fs=None)).close()
    assert raised.value.reason == "schema-mismatch"
    assert "does not know" in str(raised.value)
    # AND the read-only verbs refuse it too
    assert main(["log", "verify", "--db", str(path)]) == 2
    assert name in capsys.readouterr().err
    # AND not a byte of it changed
    assert path.read_bytes() == before
