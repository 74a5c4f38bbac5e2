"""Where a list's cursor goes when the row under it is gone (removed by another program).

Not to the first row, nor to whatever row took its place by number: to the row that
followed it, or the one before it at the end, so the cursor stays where the person was
looking; and the screen says which row went and which the cursor is on now, so a key
pressed next does not act unseen on a row the person never chose.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["nearest"]


def nearest(gone: str, before: Sequence[str], now: Sequence[str]) -> int:
    """Where in ``now`` the cursor goes once ``gone`` (in ``before``) is not in it: the
    first row after it in ``before`` still in ``now``, else the last one before it; 0
    when none is left. Linear: called only when the cursor's row went."""
    at = {row: n for n, row in enumerate(now)}
    i = before.index(gone)
    for row in before[i + 1:]:
        if row in at:
            return at[row]
    for row in reversed(before[:i]):
        if row in at:
            return at[row]
    return 0
