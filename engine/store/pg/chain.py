"""One appender at a time on a hash chain (the arrow log, the consent history).

Each row of a chain stores the hash of the row before it, so two engines that
read the same newest row and both append after it would fork the chain. On
PostgreSQL every appender first takes the chain's transaction-scoped lock and
only then reads the newest row (`lock_chain_head`): the lock is released when
the appending transaction commits, so the next appender reads the row just
committed. A rolled-back append releases the lock and leaves no gap: row
numbers are assigned here as the newest plus one, never from a sequence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from psycopg import Connection

from engine.store.log import EXTRA_FIELDS, FIELDS, GENESIS, row_hash
from engine.store.pg.locks import Lock, xact_lock

__all__ = ["ChainHead", "append_log_row", "lock_chain_head"]

_LOCKS = {"log": Lock.LOG_HEAD, "consent": Lock.CONSENT_HEAD}
_COLUMNS = (*FIELDS, "prev", "hash", *EXTRA_FIELDS)
_INSERT = (f"insert into log ({', '.join(_COLUMNS)})"
           f" values ({', '.join('%s' for _ in _COLUMNS)})")


@dataclass(frozen=True, slots=True)
class ChainHead:
    """The newest row of a chain as the lock holder sees it."""

    seq: int  #: its number; 0 when the chain is empty
    hash: str  #: its hash; `GENESIS` when the chain is empty

    @property
    def next_seq(self) -> int:
        """The number the next row takes."""
        return self.seq + 1


def lock_chain_head(conn: Connection[Any], chain: Literal["log", "consent"] = "log") -> ChainHead:
    """Take ``chain``'s append lock for the rest of the caller's transaction; read its head.

    The head is read after the lock is held (under READ COMMITTED each
    statement sees what committed before it began), so it is the newest row
    every earlier appender committed.

    Raises:
        ValueError: an unknown chain, or no transaction is open.
    """
    lock = _LOCKS.get(chain)
    if lock is None:
        raise ValueError(f"no such chain: {chain!r} (log or consent)")
    xact_lock(conn, lock)
    # `chain` is one of the two table names above, never caller text.
    row = conn.execute(f"select seq, hash from {chain} order by seq desc limit 1").fetchone()
    if row is None:
        return ChainHead(0, GENESIS)
    return ChainHead(int(row[0]), str(row[1] or GENESIS))


def append_log_row(conn: Connection[Any], row: Mapping[str, Any]) -> tuple[int, str, str]:
    """Append one row to the arrow log inside the caller's transaction.

    ``row`` holds the row's `FIELDS` (its ``seq`` is assigned here, any given
    is ignored) and, when it has them, its `EXTRA_FIELDS`; ``chain`` is a list
    or None. The row is hashed exactly as `engine.store.log.ArrowLog.append_fields`
    hashes it, so `engine.store.log.row_hash` and ``verify`` accept it.

    Returns:
        (seq, prev, hash) of the new row.

    Raises:
        ValueError: ``row`` names a field the log does not have, or no
            transaction is open.
    """
    unknown = set(row) - set(FIELDS) - set(EXTRA_FIELDS)
    if unknown:
        raise ValueError(f"not fields of a log row: {sorted(unknown)}")
    head = lock_chain_head(conn, "log")
    hashed: dict[str, Any] = {f: row.get(f) for f in (*FIELDS, *EXTRA_FIELDS)}
    hashed["seq"] = head.next_seq
    if isinstance(hashed["chain"], tuple):
        hashed["chain"] = list(hashed["chain"])
    digest = row_hash(head.hash, hashed)
    stored = {**hashed, "prev": head.hash, "hash": digest}
    if stored["chain"] is not None:
        stored["chain"] = json.dumps(stored["chain"])
    conn.execute(_INSERT, [stored[c] for c in _COLUMNS])
    return head.next_seq, head.hash, digest
