"""Who holds the locks an engine's statement gave up waiting for (a ``psql`` shell left
in a transaction, a backup job, a stuck engine), told in the `StoreFailed` it fails with.

A statement of the engine waits for a lock at most a short bound (``lock_timeout``,
`engine.store.pg.parts.LOCK_WAIT_S`; the store's write lock `engine.store.pg.batches`'
bound), then the server cancels it. By then it no longer waits, so the server cannot say
who blocked it (``pg_blocking_pids``); what can be said is who holds locks on the store
now: the sessions of this database, other than the engine's, with a transaction open and
a lock on one of the store's tables (other than a plain read's) or on its write lock,
the oldest transaction first — almost always the one that walked away.

Only what identifies a session is told (its process id, application name, state and how
long its transaction has been open), never its statement's text: the error may reach a
card's caller, and what a person typed at a shell is theirs.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import Connection

from engine.core.errors import StoreFailed
from engine.store.pg.locks import NAMESPACE, Lock

__all__ = ["holders", "is_lock_wait", "locked", "migrating"]

#: At most this many sessions are named.
NAMED = 3

_HOLDERS = f"""
select a.pid, coalesce(nullif(a.application_name, ''), 'no application name'),
       coalesce(a.state, 'unknown state'),
       extract(epoch from clock_timestamp() - a.xact_start)::bigint,
       string_agg(distinct c.relname, ', ' order by c.relname),
       bool_or(l.locktype = 'advisory' and l.classid = {NAMESPACE}
               and l.objid = {int(Lock.WRITE)} and l.objsubid = 2)
from pg_stat_activity a
join pg_locks l on l.pid = a.pid and l.granted
left join pg_class c on l.locktype = 'relation' and c.oid = l.relation
     and c.relkind in ('r', 'p') and c.relnamespace = current_schema()::regnamespace
     and l.mode <> 'AccessShareLock'
where a.datname = current_database() and a.pid <> pg_backend_pid()
  and a.xact_start is not null
group by a.pid, a.application_name, a.state, a.xact_start
having bool_or(c.relname is not null)
    or bool_or(l.locktype = 'advisory' and l.classid = {NAMESPACE}
               and l.objid = {int(Lock.WRITE)} and l.objsubid = 2)
order by a.xact_start
limit {NAMED}
"""


_MIGRATING = f"""
select a.pid, coalesce(nullif(a.application_name, ''), 'no application name'),
       extract(epoch from clock_timestamp() - a.xact_start)::bigint
from pg_locks l join pg_stat_activity a on a.pid = l.pid
where l.locktype = 'advisory' and l.granted and l.classid = {NAMESPACE}
  and l.objid = {int(Lock.MIGRATIONS)} and l.objsubid = 2
  and l.database = (select oid from pg_database where datname = current_database())
limit 1
"""


def migrating(conn: Connection[Any]) -> str:
    """Who holds the store's migrations lock now (another process migrating it), as
    words, read on ``conn``; what could not be read is said so, never raised."""
    try:
        row = conn.execute(_MIGRATING).fetchone()
    except psycopg.Error as exc:
        return f"who it is could not be asked ({type(exc).__name__})"
    if row is None:
        return "it has just ended"
    pid, app, age = row
    # A lock of the session's own (no transaction open) has no age to tell.
    since = "" if age is None else f", its transaction open for {age} s"
    return f"session {pid} ({app!r}{since})"


def is_lock_wait(exc: BaseException) -> bool:
    """Whether ``exc`` is the server giving up a wait for a lock (``lock_timeout``)."""
    return isinstance(exc, psycopg.errors.LockNotAvailable)


def holders(conn: Connection[Any] | None) -> str:
    """The sessions holding locks on the store now, as words (`NAMED` of them at most),
    read on ``conn``; what could not be read is said so, never raised."""
    if conn is None or conn.closed or conn.broken:
        return "who holds it could not be asked (the connection is gone)"
    try:
        rows = conn.execute(_HOLDERS).fetchall()
    except psycopg.Error as exc:
        return f"who holds it could not be asked ({type(exc).__name__})"
    if not rows:
        return "no session holds it any more"
    told = []
    for pid, app, state, age, tables, write_lock in rows:
        held = [f"table{'s' if tables and ',' in tables else ''} {tables}"] if tables else []
        if write_lock:
            held.append("the store's write lock")
        told.append(f"session {pid} ({app!r}, {state}, its transaction open for {age} s,"
                    f" holding {' and '.join(held)})")
    return "held by " + "; ".join(told)


def locked(what: str, waited: float, conn: Connection[Any] | None,
           exc: BaseException | None = None) -> StoreFailed:
    """The `StoreFailed` (reason ``locked``) of ``what`` after waiting ``waited`` seconds
    for a lock another session holds, naming the sessions that hold the store's locks.
    No time to retry is said (the service's ``Retry-After``): the lock is free when
    that session ends its transaction, which nothing here can foresee."""
    failed = StoreFailed(f"{what}: another session held a lock it needed for more than "
                         f"{waited:g} s (the lock timeout ran out); {holders(conn)}. End that "
                         "session's transaction (COMMIT or ROLLBACK) and it works again",
                         reason="locked")
    if exc is not None:
        failed.__cause__ = exc
    return failed
