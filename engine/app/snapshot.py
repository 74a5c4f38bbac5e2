"""An engine on a private, in-memory copy of a database: for a verb that only looks.

``arrowgate import`` shows the review an import would draw before anything is
drawn, and ``--dry-run`` shows only that. Opening the engine on the file itself
writes (migrations, the WAL's ``-wal`` and ``-shm`` files, and a new database
with its folder where none was): a look must leave the disk as it found it.
So the review is made on an in-memory copy of the file, or on an empty
database where there is none yet — what an import there would find.
The copy is read by `engine.store.database.connect_read_only`, as a reader
among the others: what other processes committed (in the WAL too) is in it,
and a writer starting meanwhile waits for no one and tears nothing. (Not
``immutable=1``, which tells SQLite the file cannot change: a writer opening
the quiet database just as the copy begins commits into a WAL that copy never
reads. Only in a folder no process of ours can write does `connect_read_only`
read so.) Files it makes beside the database, it removes as it closes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.engine import Engine

__all__ = ["snapshot_engine"]


def snapshot_engine(path: Path) -> Engine:
    """An engine on an in-memory copy of the database at ``path`` (empty when there is
    no file, or an empty one); nothing is written to ``path`` or beside it.

    Raises:
        sqlite3.DatabaseError: the file cannot be read as a database.
        StoreFailed: its schema is one this code does not know.
    """
    from engine.engine import Engine
    from engine.store.database import connect_read_only, open_database

    memory = open_database(None)
    try:
        if path.is_file() and path.stat().st_size > 0:
            source = connect_read_only(path)
            try:
                source.backup(memory.conn)
            finally:
                source.close()
        return Engine(memory)
    except BaseException:
        memory.conn.close()
        raise

