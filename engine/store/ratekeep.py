"""Which counted calls (``rate_events`` rows) the store keeps: those some window may still
count (SPEC §8 "Bounds": no card can exhaust the store).

A window's count is a workspace setting, its length never is (`RATE_LIMITS`): a row
older than the longest window before the newest row the store holds is counted by no
window of any engine. Every engine's time is at least the newest time the store holds
once it has read the store (SPEC §6: at open, at each catch-up and reload), and windows
are read back from the store only then (`engine.store.loading.load_rate_events`); so,
pruned, no window counts fewer calls than it did — after a restart, on another engine
on the store, or for a spawned copy counting in its root's window.

A store prunes in the commit that prunes its change feed, and no more than once per
longest window of stored time a connection (`RatePruning.due`): each prune reads the
table whole (no index leads with the time, and one would cost every counted call a
b-tree write), so the table is read about once per window's worth of calls, never on
a call's path.
"""

from __future__ import annotations

from typing import Any, Protocol

from engine.core.catalogue import RATE_LIMITS

__all__ = ["LONGEST_WINDOW", "RatePruning", "prune_statement"]

#: The longest window of any rate key, seconds.
LONGEST_WINDOW: float = max(limit.period for limit in RATE_LIMITS.values())


def prune_statement(mark: str) -> str:
    """The DELETE of the rows no window counts, ``mark`` the store's placeholder, given the
    newest event's time twice (`RatePruning.due`).

    ``t + LONGEST_WINDOW < newest``, compared so, never ``t < newest - LONGEST_WINDOW``:
    rounding is monotonic, so a row is deleted only when it is exactly outside the
    window, never one a rounded difference put a hair outside it. ``t < newest`` first
    leaves a time SQLite holds as text (edited outside the engine: text sorts after
    every number, yet adds as 0) for the load to find.
    """
    return f"delete from rate_events where t < {mark} and t + {LONGEST_WINDOW!r} < {mark}"


class _Reads(Protocol):
    """A connection of either store (sqlite3's or psycopg's): what `RatePruning.due_in`
    asks of it."""

    def execute(self, query: str) -> Any:
        """Run ``query``; a cursor whose ``fetchone`` answers."""
        ...


class RatePruning:
    """When one connection last pruned, by the newest stored event's time."""

    __slots__ = ("_at",)

    def __init__(self) -> None:
        #: The newest event's time at this connection's last prune (None: none yet).
        self._at: float | None = None

    def due_in(self, conn: _Reads) -> float | None:
        """`due` for the newest event ``conn``'s store holds (by number: the last
        counted)."""
        row = conn.execute("select t from rate_events order by id desc limit 1").fetchone()
        return self.due(row[0] if row is not None else None)

    def due(self, newest: object) -> float | None:
        """The newest stored event's time when a prune is due now (and taken as made),
        else None: no event yet, a time that is no number (edited outside the engine:
        the rows are left for the load to find), or one less than a longest window
        after the last prune's.

        The prune deletes the rows whose ``t + LONGEST_WINDOW`` is below it
        (`prune_statement`).
        """
        if type(newest) is not float and type(newest) is not int:
            return None
        t = float(newest)
        at = self._at
        if at is not None and t - at < LONGEST_WINDOW:
            return None
        self._at = t
        return t
