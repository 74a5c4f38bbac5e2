"""Whether the SQLite file an engine has open, and its write-ahead log, are still the
files at their paths.

SQLite's connection holds the database and its ``-wal`` by descriptor. A file removed
under it (``rm app.db``, a folder tidied by hand) or replaced (an atomic save over it,
``mv other.db app.db``) is not noticed: its commits go on into the unlinked file or
log, answered as durable, read by no other program, and gone once the engine stops
(an unlinked ``-wal`` takes with it every row not yet checkpointed into the file). So
each commit first looks at both by path (`DatabaseFiles.check`): the same device and
inode as when the engine opened them, or the commit is refused and nothing happens.

While any connection has the database open SQLite neither removes nor replaces its
``-wal`` (the last connection to close deletes it), so a log that changed was taken
away by another program. A log not there yet when the engine opened is taken as the
first one seen.

Not caught here: a file overwritten in place (``cp backup.db app.db`` keeps the inode),
which is damage rather than a move (`engine.store.database.file_damage`, which the TUI
runs once a second: it opens the file, too dear for every commit).
"""

from __future__ import annotations

import os

__all__ = ["DatabaseFiles", "FileGone"]


class FileGone(OSError):
    """The database file or its write-ahead log is no longer the one the engine opened."""


def _identity(path: str) -> tuple[int, int] | None:
    """The file's device and inode, or None when there is none at ``path``.

    Raises:
        OSError: the path cannot be looked at (a folder that may not be searched):
            whether the file is still there is not known, so the caller refuses.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


class DatabaseFiles:
    """The database file and its ``-wal`` as an engine's connection opened them.

    Args:
        path: the database file, just opened.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._paths = (path, path + "-wal")
        self._known = [_identity(p) for p in self._paths]

    def check(self) -> None:
        """Return when both are still the files opened; a commit calls it first.

        Raises:
            FileGone: one was removed or replaced (named, with what it means).
            OSError: one could not be looked at.
        """
        for index, path in enumerate(self._paths):
            now = _identity(path)
            known = self._known[index]
            if known is None:
                self._known[index] = now  # the log made since the engine opened
            elif now != known:
                what = ("the database file" if index == 0 else
                        "the database's write-ahead log")
                raise FileGone(f"{what} {path} was removed or replaced while this engine "
                               "had it open: what it wrote there now would reach no other "
                               "program and be lost once it stops; open the database again "
                               "(restart it)")
