"""Transaction-scoped advisory locks of the PostgreSQL store.

Every lock here is ``pg_advisory_xact_lock``: held until the caller's
transaction commits or rolls back, never longer, so a crashed or disconnected
engine can never leave one behind. The store's fixed locks (migrations, the
chain heads, the change feed) use the two-key form under `NAMESPACE`; the
per-(card, key) rate locks use the one-key (bigint) form, which PostgreSQL
keeps in a separate space, so the two kinds can never collide.
"""

from __future__ import annotations

import hashlib
from enum import IntEnum
from typing import Any

from psycopg import Connection
from psycopg.pq import TransactionStatus

__all__ = ["NAMESPACE", "Lock", "rate_lock_key", "require_transaction", "xact_lock"]

#: The first key of every two-key lock of the store ("AgGt"): other programs
#: sharing the database pick their own, so their locks do not wait on ours.
NAMESPACE = 0x41674774


class Lock(IntEnum):
    """The store's fixed locks (the second key, under `NAMESPACE`)."""

    MIGRATIONS = 1  #: one process applies migrations at a time
    LOG_HEAD = 2  #: one appender of the arrow log's hash chain at a time
    CONSENT_HEAD = 3  #: one appender of the consent history's hash chain at a time
    CHANGES = 4  #: change numbers are handed out in commit order
    #: The `engine.store.pg.store.PGStore`'s write lock: one engine's batch
    #: writes at a time, taken first, before any of the locks above.
    WRITE = 5


def require_transaction(conn: Connection[Any]) -> None:
    """Refuse to go on unless ``conn`` is inside an open transaction.

    A transaction-scoped lock taken outside a transaction (an autocommit
    statement) is released as soon as it is granted, so it would protect
    nothing; the caller must open one (``with conn.transaction(): …``).

    Raises:
        ValueError: no transaction is open, or the open one has already failed.
    """
    status = conn.info.transaction_status
    if status == TransactionStatus.INERROR:
        raise ValueError("the connection's transaction has failed: roll it back first")
    if status != TransactionStatus.INTRANS:
        raise ValueError("this must run inside the caller's transaction "
                         "(with conn.transaction(): ...): a transaction-scoped lock taken "
                         "outside one would be released at once")


def xact_lock(conn: Connection[Any], lock: Lock) -> None:
    """Wait for one of the store's fixed locks; it is held until the transaction ends."""
    require_transaction(conn)
    conn.execute("select pg_advisory_xact_lock(%s, %s)", [NAMESPACE, int(lock)])


def rate_lock_key(card: str, key: str) -> int:
    """The stable signed 64-bit lock key of one (card, key) rolling window.

    The same in every process and on every machine (Python's ``hash`` is
    salted per process, so it cannot be used). Two windows that happen to
    share a key only wait for each other; they never count in each other.
    """
    digest = hashlib.blake2b(f"{card}\x00{key}".encode("utf-8", "surrogatepass"),
                             digest_size=8, person=b"arrowgate.rate").digest()
    return int.from_bytes(digest, "big", signed=True)
