"""``arrowgate log show|export|verify`` only read: the database's folder is left as they
found it — no ``-wal`` or ``-shm`` file made beside a quiet database, and a ``-wal`` file
that was there (a running engine's, or one a crash left holding changes) left as it was.

(Found in round 25: each of the three verbs left an empty ``app.db-wal`` and
``app.db-shm`` beside the database it read. A read-only SQLite connection makes WAL's
two files on its first read and may not remove them as it closes; ``import --dry-run``
and the ``--db`` checks already read without making them.)
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main

VERBS = [["show"], ["show", "--json"], ["export"], ["verify"], ["verify", "--json"]]


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _database(folder: Path) -> Path:
    """A database with a workspace and a few log rows, closed (so no -wal file beside it)."""
    db = folder / "app.db"
    engine = Engine.open(db)
    try:
        asyncio.run(engine.create_workspace("w", str(folder)))
        asyncio.run(engine.add_node({"id": "n1", "type": "note"}, workspace="w"))
        for _ in range(3):  # refused and logged: rows for the verbs to read
            asyncio.run(engine.call("ghost", "agents.list"))
    finally:
        engine.close()
    return db


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_a_log_verb_makes_no_file_beside_a_quiet_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: list[str]) -> None:
    """GIVEN a closed database WHEN a log verb reads it THEN no byte or file beside it
    changed."""
    db = _database(tmp_path)
    before = _tree(tmp_path)
    assert not Path(f"{db}-wal").exists()
    assert main(["log", verb[0], "--db", str(db), *verb[1:]]) == 0, capsys.readouterr().err
    assert _tree(tmp_path) == before, "the read left files beside the database"


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_a_log_verb_leaves_a_wal_file_holding_changes_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: list[str]) -> None:
    """GIVEN a -wal file a writer left holding a commit WHEN a log verb reads THEN the
    -wal file and the database are as they were (the read checkpointed nothing)."""
    db = _database(tmp_path)
    writer = sqlite3.connect(db)
    writer.execute("pragma wal_autocheckpoint = 0")
    writer.execute("insert into meta (key, value) values ('waiting', '1')")
    writer.commit()
    # What a crash leaves: the -wal holding the commit, no process holding the file.
    kept = {name: (tmp_path / name).read_bytes() for name in ("app.db", "app.db-wal")}
    wal_before = Path(f"{db}-wal").read_bytes()
    assert main(["log", verb[0], "--db", str(db), *verb[1:]]) == 0, capsys.readouterr().err
    assert Path(f"{db}-wal").read_bytes() == wal_before
    assert {name: (tmp_path / name).read_bytes() for name in kept} == kept
    writer.close()


def test_a_log_verb_beside_a_running_engine_leaves_its_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN an engine working on the database WHEN the log is read THEN its -wal and
    -shm files stay, and the engine goes on writing."""
    db = _database(tmp_path)
    engine = Engine.open(db)
    try:
        assert Path(f"{db}-wal").exists() and Path(f"{db}-shm").exists()
        for verb in VERBS:
            assert main(["log", verb[0], "--db", str(db), *verb[1:]]) == 0
        assert Path(f"{db}-wal").exists() and Path(f"{db}-shm").exists()
        asyncio.run(engine.add_node({"id": "n2", "type": "note"}, workspace="w"))
    finally:
        engine.close()
    capsys.readouterr()
    assert main(["log", "verify", "--db", str(db)]) == 0
    assert "ok: 3 rows" in capsys.readouterr().out
