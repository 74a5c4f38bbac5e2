"""Log rows written straight into a PostgreSQL store, for tests that need a chained log
quickly (without an engine deciding each row).

One connection writes, alone: the newest row is read and the next one chained to it,
hashed as `engine.store.log.row_hash` hashes it, so the log verifies. The engine's own
appends serialise on the store's write lock instead (`engine.store.pg.batches`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from psycopg import Connection

from engine.store.log import EXTRA_FIELDS, FIELDS, GENESIS, row_hash

_COLUMNS = (*FIELDS, "prev", "hash", *EXTRA_FIELDS)
_INSERT = (f"insert into log ({', '.join(_COLUMNS)})"
           f" values ({', '.join('%s' for _ in _COLUMNS)})")


def append_log_row(conn: Connection[Any], row: Mapping[str, Any]) -> int:
    """Append ``row`` (some of the log's fields; ``seq`` is the newest plus one) after
    the newest row of the log on ``conn``; returns its number."""
    newest = conn.execute("select seq, hash from log order by seq desc limit 1").fetchone()
    seq, prev = (int(newest[0]) + 1, str(newest[1])) if newest else (1, GENESIS)
    fields: dict[str, Any] = {f: row.get(f) for f in (*FIELDS, *EXTRA_FIELDS)}
    fields["seq"] = seq
    if fields["chain"] is not None:
        fields["chain"] = list(fields["chain"])
    stored = {**fields, "prev": prev, "hash": row_hash(prev, fields)}
    if stored["chain"] is not None:
        stored["chain"] = json.dumps(stored["chain"])
    conn.execute(_INSERT, [stored[c] for c in _COLUMNS])
    return seq
