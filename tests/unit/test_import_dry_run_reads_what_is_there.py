"""``arrowgate import --dry-run`` reads the database as it really is: a write another process
committed as the look began is in what it reads, never left out because the database
looked quiet a moment before.

The look copies the database into memory (`engine.app.snapshot.snapshot_engine`). It
read a database with no ``-wal`` file beside it as ``immutable=1``, which tells SQLite
the file cannot change: no lock, and the WAL never read. A writer that opened the
database between that look for a ``-wal`` file and the copy (here: as the copy's
connection opens) commits into its WAL, and the copy left that commit out — a review
of a database that is not there, which a script may then approve by its sha256.

SQLite only: the look reads a database file.

(Found in round 25, by reading `connect_leaving_no_files`.)
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.snapshot import snapshot_engine


def test_a_dry_runs_look_reads_a_write_committed_as_it_began(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a writer committing as the look opens the database WHEN the look copies it THEN
    the commit is in the copy."""
    db = tmp_path / "app.db"
    engine = Engine.open(db)
    try:
        asyncio.run(engine.create_workspace("w1", str(tmp_path)))
    finally:
        engine.close()
    assert not Path(f"{db}-wal").exists(), "the database is quiet"
    real = sqlite3.connect
    writers: list[Engine] = []

    def connect(*args: Any, **kw: Any) -> sqlite3.Connection:
        if kw.get("uri") and not writers:
            # Another engine opens the database and commits, just as the look opens it:
            # still open, its commit is in its WAL, not yet in the database file.
            writers.append(Engine.open(db))
            asyncio.run(writers[0].create_workspace("w2", str(tmp_path)))
            assert Path(f"{db}-wal").stat().st_size > 0
        return real(*args, **kw)

    monkeypatch.setattr(sqlite3, "connect", connect)
    try:
        look = snapshot_engine(db)
        try:
            assert sorted(look.state.workspaces) == ["w1", "w2"]
        finally:
            look.close()
    finally:
        monkeypatch.undo()
        for writer in writers:
            writer.close()
    assert writers, "the look opened no connection to the database"
