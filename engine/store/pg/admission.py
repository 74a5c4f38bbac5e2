"""Rolling-window admission that stays exact across processes (SPEC §6, §10 "Storage").

Every engine on one database admits calls into the same windows, kept as
rows of ``rate_events``. `admit` serialises one (card, key) with a
transaction-scoped advisory lock and only then reads the time and counts the
window, so of any number of processes asking at once exactly ``limit`` are
admitted in a window.

Reading the time *before* taking the lock is wrong: a process that read its
time, then waited for the lock while others admitted calls, counts the window
as of its earlier time and can admit one too many (a prototype admitted 7
of 6). The count must also be read after the lock, under READ COMMITTED, so
that it sees every event committed by the holder before us: a snapshot taken
earlier in the transaction (REPEATABLE READ or SERIALIZABLE) would not.

The event is inserted in the caller's transaction: if the caller's later
steps refuse the call (``QUEUE_FULL``) and roll back, the event goes too and
is never counted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from psycopg import Connection

from engine.store.pg.locks import rate_lock_key, require_transaction

__all__ = ["Admission", "admit"]


@dataclass(frozen=True, slots=True)
class Admission:
    """What `admit` decided."""

    admitted: bool
    #: The time the window was read at (after the lock), which is the time
    #: recorded for the event when admitted.
    t: float
    #: Events of this (card, key) in the window before this call.
    counted: int
    #: Seconds until a call would fit, when refused; None when admitted.
    retry_after: float | None


def admit(conn: Connection[Any], card: str, key: str, *, limit: int, period: float,
          now: Callable[[], float]) -> Admission:
    """Admit one call of ``card`` under rate key ``key`` if its window has room.

    Inside the caller's transaction: waits for the (card, key) lock, reads
    ``now()``, counts the events in the half-open window (t − period, t], and
    when fewer than ``limit`` inserts one at t. As in the engine's own windows
    (`engine.core.limits.RollingWindow`), events stamped after t count too (another
    engine's clock may run ahead of ours), and a refusal's ``retry_after`` is
    when the limit-th newest event inside leaves the window.

    Args:
        card: whose window (the spawn tree's root, `engine.core.limits.rate_owner`).
        key: the rate key (e.g. ``prompt``).
        limit: calls allowed in any window, at least 1.
        period: the window's length in seconds, finite and positive.
        now: the engine's clock, called once, after the lock is held.

    Raises:
        ValueError: an argument is out of range, ``now()`` is not a finite
            number, no transaction is open, or the transaction is not READ
            COMMITTED. Nothing is inserted.
    """
    if not card or not key:
        raise ValueError("admit needs a card and a rate key")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a whole number of at least 1, not {limit!r}")
    if not isinstance(period, (int, float)) or not math.isfinite(period) or period <= 0:
        raise ValueError(f"period must be a finite number of seconds above 0, not {period!r}")
    require_transaction(conn)
    row = conn.execute("select pg_advisory_xact_lock(%s), current_setting('transaction_isolation')",
                       [rate_lock_key(card, key)]).fetchone()
    if row is None or row[1] != "read committed":
        raise ValueError("admit needs a READ COMMITTED transaction, so that its count sees "
                         f"what the lock's last holder committed (this one is {row and row[1]})")
    t = now()
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise ValueError(f"the clock gave {t!r}, not a finite time")
    t = float(t)
    period = float(period)
    # The index narrows to about the window; `x + period > t` is the engine's
    # own test, computed in the same IEEE doubles, so both stores agree exactly.
    rough = t - period - (abs(t) + period) * 1e-9
    inside = [float(r[0]) for r in conn.execute(
        "select t from rate_events where card = %s and key = %s and t > %s and t + %s > %s"
        " order by t, id", [card, key, rough, period, t]).fetchall()]
    if len(inside) >= limit:
        # The next call fits once the limit-th newest event inside has left.
        retry = inside[len(inside) - limit] + period - t
        return Admission(False, t, len(inside), retry)
    conn.execute("insert into rate_events (card, key, t) values (%s, %s, %s)", [card, key, t])
    return Admission(True, t, len(inside), None)
