"""The store: the only place with SQL.

`base.Store` names every operation the services need; `sqlite.SQLiteStore`
implements it on one SQLite file (the PostgreSQL store, `pg`, is the next).
Its pieces: the schema as one migration chain (`migrations`), opening the
file and where it lives (`database`), group commit, savepoints and catching
up with other processes (`transactions`), reading the state (`loading`), the
canvas tables (`canvas`), the arrow log with its anchor (`log`, `anchor`,
`logindex`), the consent history (`history`), the secret vault (`vault`) and
the service's tokens (`tokens`).

Its names are imported when first asked for (PEP 562), not with the package, as
`engine`'s are: the verifier process (``python -m engine.store.logindex``) imports
this package before its module, and needs the log, not the whole store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Where each public name is defined.
_WHERE = {
    "BUSY_TIMEOUT_S": "engine.store.database",
    "CanvasStore": "engine.store.canvas",
    "SQLiteStore": "engine.store.sqlite",
    "Store": "engine.store.base",
    "database_file": "engine.store.database",
    "default_database_path": "engine.store.database",
    "open_database": "engine.store.database",
    "write_transaction": "engine.store.database",
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'engine.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # asked once
    return value


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
