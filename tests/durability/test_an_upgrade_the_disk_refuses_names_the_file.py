"""An upgrade the disk refuses names the database and says it is as it was.

`arrowgate upgrade` first reads the file's ledger (read-only, which still makes the
write-ahead log's shared memory file beside it) and then migrates it in one
transaction. Either failing for the disk (full, or failing) left only SQLite's words,
"the database cannot be used: disk I/O error", naming no file and not saying whether
the upgrade had begun: the database is named, with the error, and that nothing of it
changed (the migration is one transaction: a failed one leaves the file as it was).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine import Engine, World
from engine.app.cli import main
from engine.store import database, migrations


@pytest.fixture
def older(tmp_path: Path) -> Path:
    """A store of round 20's schema, before the steps since."""
    path = tmp_path / "app.db"
    db = database.open_database(path)
    migrations.migrations.apply(db, stop_before="m021_terminal_drivers")
    db.close()
    return path


@pytest.mark.parametrize("where", ["reading its ledger", "migrating it"])
def test_an_upgrade_the_disk_refuses_names_the_file_and_leaves_it(
        older: Path, where: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The disk's error, the database's name, and the file as it was."""
    # GIVEN an older store, and a disk that fails the upgrade at one of its two steps
    before = older.read_bytes()

    def full(*_args: object, **_kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    if where == "reading its ledger":
        monkeypatch.setattr(database, "open_read_only", full)
    else:
        monkeypatch.setattr(migrations.Chain, "apply", full)
    # WHEN it is upgraded, THEN the error names the file and says it is as it was
    assert main(["upgrade", "--db", str(older)]) == 1
    err = capsys.readouterr().err
    assert str(older) in err and "database or disk is full" in err, err
    assert "not upgraded" in err and "as it was" in err, err
    assert older.read_bytes() == before
    # AND once the disk has room again, it upgrades
    monkeypatch.undo()
    assert main(["upgrade", "--db", str(older)]) == 0
    Engine.open(older, world=World(net=None, fs=None)).close()
