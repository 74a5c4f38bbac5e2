"""Transaction-scoped advisory locks of the PostgreSQL store.

Every lock here is ``pg_advisory_xact_lock``: held until the caller's
transaction commits or rolls back, never longer, so a crashed or disconnected
engine can never leave one behind. They are two-key locks under `NAMESPACE`.

One lock serialises the engines' writes: a batch (`engine.store.pg.batches`),
and a token's revocation, takes `Lock.WRITE` first; under it the batch appends
the arrow log's and the consent history's rows (one appender at a time, so
neither hash chain forks), counts rate events and decides on rolling windows
that are exact across engines. The change feed's lock is taken under it;
the migrations' apart from it, at open.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from psycopg import Connection
from psycopg.pq import TransactionStatus

__all__ = ["MINTS", "NAMESPACE", "Lock", "mint_lock", "require_transaction", "try_xact_lock",
           "xact_lock"]

#: The first key of every two-key lock of the store ("AgGt"): other programs
#: sharing the database pick their own, so their locks do not wait on ours.
NAMESPACE = 0x41674774
#: The first key of the locks that serialize the mints of one principal's tokens
#: ("AgtM"), the second its name's hash (`mint_lock`): apart from `NAMESPACE`, so a
#: hash never meets one of the fixed `Lock` keys.
MINTS = 0x4167744D


class Lock(IntEnum):
    """The store's fixed locks (the second key, under `NAMESPACE`).

    A number is a key every engine on the database takes, whatever its version:
    one never changes meaning, and 2 and 3 (once the hash chains' own locks) are
    not reused.
    """

    MIGRATIONS = 1  #: one process applies migrations at a time
    CHANGES = 4  #: change numbers are handed out in commit order
    #: The `engine.store.pg.store.PGStore`'s write lock: one engine's batch
    #: writes at a time, taken first, before the change feed's lock.
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


def mint_lock(conn: Connection[Any], principal: str) -> None:
    """Wait for the lock of ``principal``'s token mints; held until the transaction ends.

    Keyed by the principal's ``hashtext``: two principals whose hashes meet only
    wait on each other, never mint past their bound.
    """
    require_transaction(conn)
    conn.execute("select pg_advisory_xact_lock(%s, hashtext(%s))", [MINTS, principal])


def try_xact_lock(conn: Connection[Any], lock: Lock) -> bool:
    """Take one of the store's fixed locks if no one holds it, without waiting; whether
    it was taken (then held until the transaction ends, as `xact_lock`'s)."""
    require_transaction(conn)
    row = conn.execute("select pg_try_advisory_xact_lock(%s, %s)",
                       [NAMESPACE, int(lock)]).fetchone()
    return bool(row and row[0])
