"""Whether the SQLite file under the app is still the one it opened, and still a database.

The engine's connection keeps pages it read and goes on writing its log into
the file's ``-wal``: a file removed, replaced or overwritten under the app is
not noticed by it. A consent action taken then would be held by the open app
alone, while every other program (the canvas app, ``arrowgate serve``, the
engine opened next) cannot read it, or reads another file. The app looks at the
file itself, as another program would, before each consent action and once a second.
"""

from __future__ import annotations

import os
import sqlite3

from engine.store.database import UnsafeToRead, connect_read_only

__all__ = ["SQLITE_HEADER", "damage", "identity"]

#: The first 16 bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"


def identity(path: str) -> tuple[int, int] | None:
    """The file's device and inode, or None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def damage(path: str) -> str:
    """Why another program could not read the database file ``path`` now, or "".

    Reads its header, then its schema on a read-only connection of its own (never
    the engine's, whose cached pages would hide what the file now holds).
    """
    try:
        with open(path, "rb") as file:
            head = file.read(len(SQLITE_HEADER))
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if head != SQLITE_HEADER:
        return "was overwritten: it no longer starts as an SQLite database"
    try:
        conn = connect_read_only(path)
        try:
            conn.execute("select count(*) from sqlite_master").fetchone()
        finally:
            conn.close()
    except UnsafeToRead:
        return ""  # a read-only folder: nothing of ours writes there (not damage)
    except sqlite3.Error as exc:
        return f"cannot be read by another program: {exc}"
    return ""
