"""What a command made before it was refused, so that it is undone: a refusal leaves
nothing behind (`arrowgate serve`'s socket and token file, a new database and its
folders, `arrowgate workspace add`'s first database)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from engine.store.database import COMPANIONS

__all__ = ["MadeFiles"]

#: The files the engine makes beside a database it creates, by the end of their names
#: (the store's one list, `COMPANIONS`, but its operator token: a command that makes one
#: names it in ``files``).
_BESIDE_A_NEW_DATABASE = tuple(end for end in COMPANIONS if end != ".operator-token")


class MadeFiles:
    """The folders, files and new database a command made, noted before it makes each,
    removed by `undo` when the command is refused."""

    def __init__(self) -> None:
        self.folders: list[Path] = []  #: made by this command, outermost first
        self.files: list[Path] = []  #: made by this command
        self.database: Path | None = None  #: a database this command created

    def folders_for(self, path: Path | None) -> None:
        """Note the folders above ``path`` that do not exist yet (about to be made)."""
        if path is None:
            return
        missing = []
        folder = path.parent
        while not os.path.lexists(folder):
            missing.append(folder)
            folder = folder.parent
        self.folders.extend(reversed(missing))

    def new_database(self, db: Path) -> None:
        """Note ``db`` and the folders above it, when it does not exist yet (about to be
        created); a database that exists is never noted, so never removed."""
        self.folders_for(db)
        if not os.path.lexists(db):
            self.database = db

    def undo(self) -> None:
        """Remove them: files, the new database with its companions, then the folders
        (each only if empty), innermost first."""
        doomed = list(self.files)
        if self.database is not None:
            db = self.database
            doomed += [db, *(db.with_name(db.name + end) for end in _BESIDE_A_NEW_DATABASE)]
        for path in doomed:
            with contextlib.suppress(OSError):
                os.unlink(path)
        for folder in reversed(self.folders):
            with contextlib.suppress(OSError):
                os.rmdir(folder)
