"""A look at a SQLite store as it stands, for a verb that only reads it.

Opening the engine writes: it migrates an older database in place, expires the
holds whose time passed, writes pending summaries, and makes the WAL's files
beside the database. A verb that only looks (``arrowgate reach``, ``export``,
``hold list``, ``package review``) must change nothing — the database may be a
copy someone inspects, a read-only file, or one another engine is using — so it
reads the state through a `StoreView` instead: a read-only connection
(`engine.store.database.open_read_only`, which leaves the folder as it found it),
the state loaded in one read snapshot, nothing expired or written.

A database this code would have to upgrade first (`Chain.behind`) is refused
(`OlderSchema`), as is one a newer engine upgraded and one missing a table its
migrations made: read as it stands, its tables would not say what this code
means by them.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

from sqlite_utils import Database

from engine.core.errors import StoreFailed
from engine.core.limits import SteadyClock
from engine.core.state import State
from engine.store.canvas import CanvasStore
from engine.store.database import open_read_only
from engine.store.loading import load_state
from engine.store.log import refuse_missing
from engine.store.migrations import migrations

__all__ = ["OlderSchema", "StoreView"]


class OlderSchema(StoreFailed):
    """The database was made by an older arrowgate: reading it needs an upgrade, which a
    view never makes. Reason ``older-schema``; `steps` names what the upgrade applies."""

    def __init__(self, path: str, steps: list[str]) -> None:
        shown = ", ".join(steps[:3]) + (f" and {len(steps) - 3} more" if len(steps) > 3 else "")
        # Named with the command that upgrades it, as `refuse_missing` names `log verify`.
        super().__init__(f"{path} was made by an older arrowgate (its schema lacks {shown}):"
                         " this verb only reads and never upgrades it; `arrowgate upgrade "
                         f"--db {shlex.quote(path)}` does (the log's verbs read it as it is)",
                         reason="older-schema")
        self.path = path  #: the database refused
        self.steps = steps  #: the migrations an upgrade would apply, in order


class StoreView:
    """The state of the SQLite store at ``path`` as one read snapshot holds it, read on a
    connection that writes nothing; `close` it after.

    Raises:
        OlderSchema: the database needs an upgrade first.
        StoreFailed: reason ``schema-mismatch`` (a newer engine's schema, a lost
            ledger) or ``missing-table``, as opening the engine refuses them.
        UnsafeToRead: a read-only folder with changes waiting in the ``-wal`` file.
        sqlite3.DatabaseError: the file cannot be read as a database.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.db: Database = open_read_only(path)
        try:
            #: The clock of this look: wall-clock time, never behind the store's newest.
            self.clock = SteadyClock(time.time)
            #: The state, as an engine opening the store would load it.
            self.state: State = self._load()
        except BaseException:
            self.db.close()
            raise

    def _load(self) -> State:
        # One read snapshot until `close`: the checks, the state and `meta` agree.
        self.db.conn.execute("BEGIN")
        migrations.refuse_unknown(self.db)
        behind = migrations.behind(self.db)
        if behind:
            raise OlderSchema(self.path, behind)
        refuse_missing(migrations.missing_tables(self.db))
        return load_state(self.db, CanvasStore(self.db), self.clock)

    def meta(self, key: str) -> str | None:
        """A value of the store's ``meta`` table (in the snapshot the state came from), or
        None."""
        row = self.db.conn.execute("select value from meta where key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        """Close the connection, ending its snapshot (it wrote nothing)."""
        self.db.close()

    def __enter__(self) -> StoreView:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
