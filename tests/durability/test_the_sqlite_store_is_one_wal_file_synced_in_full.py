"""SPEC §10 Storage: one SQLite file per app, in WAL mode, the embedded default, and every
change of consent and every log row durable once the call that made it returns.

WAL lets the TUI, ``log show`` and a second engine read while one writes; a commit is
durable when it returns only with ``synchronous=FULL`` on each connection that writes
(under WAL, SQLite's usual ``NORMAL`` may lose the last commits at a power cut). So the
file an engine makes is a WAL file, and every connection that writes to it — the
engine's own, and the service's token table's — syncs in full, also when the engine
opens a file made before.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine import Engine, World
from engine.store.tokens import SQLiteTokens

#: ``PRAGMA synchronous``'s answer for FULL.
FULL = 2


def _journal_mode(db: Path) -> str:
    """The journal mode the file itself records, read by a connection of our own."""
    con = sqlite3.connect(db)
    try:
        return str(con.execute("pragma journal_mode").fetchone()[0])
    finally:
        con.close()


async def test_an_engines_file_is_wal_and_each_writer_syncs_in_full(tmp_path: Path) -> None:
    """A new file is WAL; the engine's and the token table's connections sync in full,
    on a new file and on one opened again."""
    db = tmp_path / "app" / "arrowgate.db"
    for i in range(2):  # made, then opened again
        # GIVEN an engine opened on the file (WHEN it writes a change of consent)
        engine = Engine.open(db, world=World(net=None, fs=None))
        tokens = SQLiteTokens(db)
        try:
            await engine.create_workspace(f"w{i}", tmp_path)
            # THEN the file is a WAL file, its writers in full sync
            assert _journal_mode(db) == "wal"
            store = engine.store
            assert store.db.execute("pragma synchronous").fetchone()[0] == FULL  # type: ignore[attr-defined]
            assert tokens._write.execute("pragma synchronous").fetchone()[0] == FULL
        finally:
            tokens.close()
            engine.close()
