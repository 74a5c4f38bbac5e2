"""A verb that only reads never changes the database it reads: not a byte of the file, its
anchor, or a file beside it — whoever runs it (a person inspecting a copy, a read-only file,
a database another engine is using).

- On a database an older arrowgate made, ``reach``, ``export``, ``hold list`` and ``package
  review`` refuse (exit 2), naming ``arrowgate upgrade``, the verb that upgrades it; the
  log's verbs read it as it stands (README, "Durability and tamper evidence").
- On a database of this schema holding a hold whose time passed, none of them expires it:
  ``hold list`` leaves it out (it can no longer be approved), and the next engine to open
  the store expires it, logged at its deadline, as ever.

SQLite only: these verbs read a database file (``--db``); on PostgreSQL the log's verbs
read an older store as it stands (tests/pg/test_log_verbs_leave_an_older_store_as_it_is.py).

(Found in round 25: ``reach`` and ``export`` opened the engine, which migrated an older
database in place and expired its overdue holds.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main

DATA = Path(__file__).parent.parent / "data"

#: Verbs that open the store to look: each refuses a database of an older schema.
VIEWS = [["reach", "c1"], ["export", "--workspace", "w1"], ["hold", "list"],
         ["package", "review", "acme.prompter"]]
#: The log's verbs: they read an older database as it stands.
LOG = [["log", "show"], ["log", "export"], ["log", "verify"]]


def _older(tmp_path: Path) -> Path:
    """A copy of a database of an older arrowgate (its anchor too), with a held prompt
    whose deadline passed long ago."""
    db = tmp_path / "app.db"
    shutil.copy(DATA / "two-chain.sqlite", db)
    shutil.copy(DATA / "two-chain.sqlite.anchor", f"{db}.anchor")
    return db


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("verb", VIEWS + [[*v, "--json"] for v in VIEWS], ids=" ".join)
def test_a_view_refuses_an_older_database_naming_the_upgrade(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: list[str]) -> None:
    """GIVEN a copy of an older database WHEN a verb that looks reads it THEN exit 2 naming
    `arrowgate upgrade`, and not a byte changed."""
    db = _older(tmp_path)
    before = _tree(tmp_path)
    as_json = "--json" in verb
    code = main([*verb, "--db", str(db)])
    out, err = capsys.readouterr()
    assert _tree(tmp_path) == before, "the read changed the database or made files"
    assert code == 2, (out, err)
    assert out == "", out
    if as_json:
        error = json.loads(err)["error"]
        assert "arrowgate upgrade" in error["message"], error
    else:
        assert err.startswith("arrowgate: ") and err.count("\n") == 1, err
        assert "older" in err and f"arrowgate upgrade --db {db}" in err, err


@pytest.mark.parametrize("verb", LOG, ids=" ".join)
def test_a_log_verb_reads_an_older_database_as_it_stands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: list[str]) -> None:
    """GIVEN an older database WHEN a log verb reads it THEN it reads it as it stands, not a
    byte changed."""
    db = _older(tmp_path)
    before = _tree(tmp_path)
    assert main([*verb, "--db", str(db)]) == 0, capsys.readouterr()
    assert _tree(tmp_path) == before, "the read changed the database or made files"


def test_the_upgrade_named_makes_the_database_readable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN an older database WHEN `arrowgate upgrade` runs THEN the views read it, and a
    second upgrade applies nothing."""
    db = _older(tmp_path)
    assert main(["upgrade", "--db", str(db), "--json"]) == 0, capsys.readouterr().err
    done = json.loads(capsys.readouterr().out)
    assert done["applied"] and done["applied"][-1] == "m024_consent_by_package", done
    assert main(["reach", "c1", "--db", str(db)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["upgrade", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["applied"] == [], "twice is once"


def _current_with_an_overdue_hold(tmp_path: Path) -> Path:
    """The older database upgraded by an engine whose clock stood before the held
    prompt's deadline: a database of this schema holding a hold now overdue."""
    db = _older(tmp_path)
    Engine.open(db, clock=lambda: 1001.0).close()
    assert [p.id for p in _held(db)] == ["p2"]
    return db


def _held(db: Path) -> list[object]:
    engine = Engine.open(db, clock=lambda: 1001.0)
    try:
        return list(engine.prompts(state="held"))
    finally:
        engine.close()


@pytest.mark.parametrize("verb", VIEWS + LOG, ids=" ".join)
def test_a_read_verb_never_expires_an_overdue_hold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: list[str]) -> None:
    """GIVEN a hold past its deadline WHEN a read verb runs THEN nothing is expired or written,
    and hold list leaves it out."""
    db = _current_with_an_overdue_hold(tmp_path)
    before = _tree(tmp_path)
    assert main([*verb, "--db", str(db)]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert _tree(tmp_path) == before, "the read changed the database or made files"
    if verb == ["hold", "list"]:
        assert out == "no held prompts\n", "a hold past its deadline cannot be approved"
