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

from engine.store.database import file_damage as damage

__all__ = ["damage", "identity"]


def identity(path: str) -> tuple[int, int] | None:
    """The file's device and inode, or None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
