"""A log row as the TUI shows it: each field of the type the engine writes, or flagged.

The log is hash-chained so that a row altered by hand is *found*; the person
then opens the TUI to look at the row `log verify` named. Such a row may hold
what the engine never writes — a time that is not a number, a BLOB where text
belongs — and the TUI must still draw it, open its detail and copy it, never
end with a traceback. `readable` shows each such field empty and keeps its
stored value under ``unreadable``, as the engine's readers flag a chain that
does not decode (`engine.store.decoding`).
"""

from __future__ import annotations

import math
import time
from typing import Any

from engine.store.decoding import UNREADABLE, flag_field

__all__ = ["UNREADABLE", "is_time", "readable"]

#: Columns the engine writes as text or NULL.
_TEXT = ("workspace", "arrow", "card", "package", "version", "call", "target", "payload",
         "outcome", "code", "reason", "approver", "prompt", "prev", "hash", "payload_sha256")


def is_time(value: Any) -> bool:
    """Seconds since the epoch that a calendar time can be made of."""
    if type(value) not in (int, float) or not math.isfinite(value):
        return False
    try:
        time.gmtime(value)
    except (OverflowError, OSError, ValueError):
        return False
    return True


def _is_text(value: Any) -> bool:
    return value is None or type(value) is str


def _is_count(value: Any) -> bool:
    return value is None or type(value) is int


def readable(row: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``row`` with each field the engine could not have written flagged.

    The field is shown as None and its stored value (its text, or the ``repr``
    of a value that is not text) kept under ``row["unreadable"]``, next to a
    chain the reader flagged already.
    """
    shown = dict(row)
    if UNREADABLE in shown:
        shown[UNREADABLE] = dict(shown[UNREADABLE])  # the reader's dict stays as it was
    flag_field(shown, "t", is_time, None)
    for field in _TEXT:
        flag_field(shown, field, _is_text, None)
    flag_field(shown, "payload_bytes", _is_count, None)
    return shown
