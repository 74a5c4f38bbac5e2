"""The change feed: every engine on one database learns of each consent change.

A change (a grant, a revoke, an install, an edit of the canvas…) is a row of
``changes`` written in the same transaction as the change itself, numbered
1, 2, 3… in commit order, and announced with ``NOTIFY`` carrying only that
number. A follower (`follow_changes`) never trusts notifications to be
complete: it reads every row newer than the last one it saw, after each
notification, after each reconnection and every ``poll`` seconds, so a
notification lost with a dropped connection is never a missed revoke.

The numbers must follow commit order, or a follower could see 6 committed,
move past it, and never read 5 committed a moment later. So `record_change`
takes the feed's lock before choosing the number (the newest plus one), and
the lock is held until the commit: the next writer can only choose its
number after this one is visible. (A sequence would hand numbers out at
insert time, in no particular commit order, and leave gaps on rollback.)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from psycopg import Connection

from engine.core.errors import StoreFailed
from engine.core.text import one_line
from engine.store.pg.locks import Lock, require_transaction, xact_lock

__all__ = ["CHANNEL", "ENGINE_MARK", "ENGINE_SETTING", "RETRY_MAX_S", "changes_after",
           "follow_changes", "latest_change", "latest_change_and_row", "record_change"]

#: The longest wait between two attempts to reconnect: each failed attempt doubles the
#: wait from `follow_changes`' ``retry`` up to this, so a server away for an hour costs
#: a connection attempt every few seconds, and one back is listened to within them.
RETRY_MAX_S = 5.0

#: The NOTIFY channel; each payload is one change number, in decimal.
CHANNEL = "arrowgate_changes"

#: What marks a transaction as the engine's own: a setting each of its writing
#: transactions sets for itself alone (`ENGINE_MARK`; a batch in the round trip that
#: opens it, `engine.store.pg.batches`). The engine records its writes itself, so the
#: triggers that record the writes of anyone else (a ``psql`` shell; PostgreSQL's
#: m012, `engine.store.pg.schema`) pass its rows by, before queueing any work.
ENGINE_SETTING = "arrowgate.engine"
#: `ENGINE_SETTING` set for the transaction (``true``: local to it), as an expression.
ENGINE_MARK = f"set_config('{ENGINE_SETTING}', '1', true)"


def record_change(conn: Connection[Any], kind: str, subject: dict[str, Any], *,
                  t: float) -> int:
    """Append a change in the caller's transaction; returns its number.

    The other engines are notified when (and only if) the transaction
    commits: PostgreSQL delivers ``NOTIFY`` at commit, in commit order.

    Args:
        kind: what changed, e.g. ``grant`` or ``revoke``.
        subject: what it concerns, as JSON (e.g. ``{"package": …}``).
        t: the engine's time of the change.

    Raises:
        ValueError: an empty ``kind``, or no transaction is open.
        TypeError: ``subject`` is not JSON.
    """
    if not kind:
        raise ValueError("a change needs a kind")
    body = json.dumps(subject, sort_keys=True)
    require_transaction(conn)
    xact_lock(conn, Lock.CHANGES)
    row = conn.execute(
        "insert into changes (seq, t, kind, subject)"
        " select coalesce(max(seq), 0) + 1, %s, %s, %s from changes returning seq",
        [t, kind, body]).fetchone()
    assert row is not None  # insert … returning always gives the row
    seq = int(row[0])
    conn.execute("select pg_notify(%s, %s)", [CHANNEL, str(seq)])
    return seq


def latest_change(conn: Connection[Any]) -> int:
    """The newest committed change's number (0 when there is none).

    An engine reads it at the start of a decision: once it has applied every
    change up to this number, it has seen every change committed before.
    """
    row = conn.execute("select coalesce(max(seq), 0) from changes").fetchone()
    return int(row[0]) if row else 0


#: `latest_change_and_row`'s statement: all in one round trip, each one index lookup.
_LATEST_AND_ROW = ("select coalesce((select max(seq) from changes), 0),"
                   " coalesce((select max(seq) from log), 0),"
                   " greatest((select t from log order by seq desc limit 1),"
                   " (select t from consent order by seq desc limit 1)),"
                   " coalesce((select max(position) from schema_migrations), -1)")


def latest_change_and_row(conn: Connection[Any]) -> tuple[int, int, float | None, int]:
    """`latest_change`, the arrow log's newest row number (0 for none), the newest
    time the log and the consent history hold (None for none) and the migrations
    ledger's newest position (-1 for none), in the same round trip.

    A batch of log rows only (a refused call) records no change: live views learn of
    another engine's rows by the log's numbers, and an engine whose clock is behind
    another's learns the time it must not stamp before (SPEC §6) by the newest time;
    an engine learns that a newer one migrated the store by the ledger's position.
    """
    row = conn.execute(_LATEST_AND_ROW).fetchone()
    if row is None:
        return 0, 0, None, -1
    newest = row[2]
    return (int(row[0]), int(row[1]), float(newest) if newest is not None else None,
            int(row[3]))


def changes_after(conn: Connection[Any], seq: int) -> list[int]:
    """Numbers of the committed changes newer than ``seq``, oldest first."""
    return [int(r[0]) for r in
            conn.execute("select seq from changes where seq > %s order by seq",
                         [seq]).fetchall()]


def follow_changes(connect: Callable[[], Connection[Any]], after: int = 0, *,
                   stop: threading.Event | None = None, poll: float = 1.0,
                   retry: float = 0.2, give_up: float | None = None) -> Iterator[int]:
    """Yield the number of every change committed after ``after``, once each, in order.

    Listens on its own connection (from ``connect``, set to autocommit). When
    the connection drops it reconnects, listens again and catches up before
    waiting, so nothing committed meanwhile is missed. Closing the generator
    closes the connection.

    A server that is away (restarting, failing over, a network partition) is
    waited out for as long as the feed is followed, unless ``give_up`` says
    otherwise: the first attempt is made at once, then each wait doubles from
    ``retry`` up to `RETRY_MAX_S`.

    Args:
        connect: opens a new connection to the store's database.
        after: the last change already seen.
        stop: when set, the generator returns at its next wake-up: at most
            ``poll`` seconds later, or at once on any notification on
            `CHANNEL` (``NOTIFY arrowgate_changes, '0'`` wakes followers
            without making them read); a wait to reconnect ends at once too.
        poll: the longest wait between two catch-up reads.
        retry: seconds of the first wait between attempts to reconnect.
        give_up: seconds of failing to reconnect after which it raises (None:
            never; an engine's feed is followed as long as the engine runs).

    Raises:
        ValueError: ``after`` is not a change number, or ``poll``, ``retry``
            or ``give_up`` is not positive.
        StoreFailed: ``give_up`` given, and no connection could be made for so long.
    """
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise ValueError(f"after must be a change number (0 or more), not {after!r}")
    for name, value in (("poll", poll), ("retry", retry), ("give_up", give_up)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be above 0 seconds, not {value!r}")
    last = after
    failing_since: float | None = None
    wait = retry

    def stopped() -> bool:
        return stop is not None and stop.is_set()

    while not stopped():
        try:
            with connect() as conn:
                conn.autocommit = True  # notifications arrive between transactions
                # Listen first, then read: a change committed in between is
                # then both read and notified, never neither.
                conn.execute(f"listen {CHANNEL}")
                failing_since = None
                wait = retry
                stale = False
                while True:
                    if not stale:
                        for seq in changes_after(conn, last):
                            last = seq
                            yield seq
                    if stopped():
                        return
                    # Wait for a notification or `poll` seconds, then read
                    # again, unless all that came were numbers already read.
                    notes = list(conn.notifies(timeout=poll, stop_after=1))
                    stale = bool(notes) and all(
                        n.payload.isdigit() and int(n.payload) <= last for n in notes)
        except psycopg.OperationalError as exc:
            # The connection dropped or could not be made (server restart,
            # killed backend, network). The first time, reconnect at once;
            # the catch-up read after it covers whatever was missed.
            now = time.monotonic()
            if failing_since is None:
                failing_since = now
                continue
            if give_up is not None and now - failing_since >= give_up:
                raise StoreFailed(f"the change feed could not reconnect for {give_up:g} s: "
                                  f"{one_line(str(exc))}", reason="change-feed-lost") from exc
            if stop is not None:
                stop.wait(wait)
            else:
                time.sleep(wait)
            wait = min(wait * 2, max(RETRY_MAX_S, retry))
