"""The store: the only place with SQL.

`base.Store` names every operation the services need; `sqlite.SQLiteStore`
implements it on one SQLite file (the PostgreSQL store, `pg`, is the next).
Its pieces: the schema as one migration chain (`migrations`), opening the
file and where it lives (`database`), group commit, savepoints and catching
up with other processes (`transactions`), reading the state (`loading`), the
canvas tables (`canvas`), the arrow log with its anchor (`log`, `anchor`,
`logindex`), the consent history (`history`), the secret vault (`vault`) and
the service's tokens (`tokens`).
"""

from engine.store.base import Store
from engine.store.canvas import CanvasStore
from engine.store.database import (
    BUSY_TIMEOUT_S,
    database_file,
    default_database_path,
    open_database,
    write_transaction,
)
from engine.store.sqlite import SQLiteStore

__all__ = [
    "BUSY_TIMEOUT_S",
    "CanvasStore",
    "SQLiteStore",
    "Store",
    "database_file",
    "default_database_path",
    "open_database",
    "write_transaction",
]
