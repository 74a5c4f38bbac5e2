"""A workspace's token usage and cost: the totals ``usage.get`` answers.

A usage report adds to the totals; one that is not a count or an amount is
refused whole, so the totals stay numbers a store holds exactly and every later
report can add to.
"""

from __future__ import annotations

import math
from typing import Any

from canvas.model import is_finite_number
from engine.core.errors import InvalidArgument

__all__ = ["MAX_TOKENS", "Usage", "added_usage", "usage_from_row"]

#: A workspace's totals: tokens used and what they cost.
Usage = tuple[int, float]

#: The largest token total: a signed 64-bit integer, the widest either store keeps
#: (SQLite raises OverflowError beyond it; Postgres's ``bigint`` refuses it).
MAX_TOKENS = 2**63 - 1


def added_usage(before: Usage, tokens: Any, cost: Any) -> Usage:
    """The totals after adding one report of ``tokens`` and ``cost`` to ``before``.

    Raises:
        InvalidArgument: ``tokens`` is not a whole number from 0, ``cost`` not a
            finite number from 0, or the new totals would leave those ranges
            (tokens beyond `MAX_TOKENS`, a cost that overflows to infinity).
    """
    # bool is an int subclass; a JSON true is not a count.
    if type(tokens) is not int or tokens < 0:
        raise _bad("tokens", f"must be a whole number from 0, not {_shown(tokens)}")
    # A NaN cost was stored as NULL and made every later report fail: refuse it here.
    amount = _amount(cost)
    if amount is None:
        raise _bad("cost", f"must be a finite number from 0, not {_shown(cost)}")
    total_tokens, total_cost = before[0] + tokens, before[1] + amount
    if total_tokens > MAX_TOKENS:
        raise _bad("tokens", f"would take the workspace's total beyond {MAX_TOKENS}")
    if not math.isfinite(total_cost):
        raise _bad("cost", "would make the workspace's total cost overflow")
    return (total_tokens, total_cost)


def usage_from_row(row: dict[str, Any]) -> Usage:
    """A ``usage`` row as totals; a total that is not a number reads as 0.

    Older versions stored a NaN cost as NULL (and could store a NULL token
    count); that total was lost when it was written, and reading it back as
    ``None`` made every later report raise. Counting afresh from 0 keeps the
    workspace's usage working.
    """
    tokens, cost = row["tokens"], row["cost"]
    return (tokens if type(tokens) is int and 0 <= tokens <= MAX_TOKENS else 0,
            _amount(cost) or 0.0)


def _amount(value: Any) -> float | None:
    """``value`` as a float when it is a finite number from 0 that a float holds, else None
    (an int beyond a float's range would raise OverflowError when added)."""
    if not is_finite_number(value) or value < 0:
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def _shown(value: Any) -> str:
    # The repr of an int past 4,300 digits raises ValueError; a message stays short.
    if type(value) is int and abs(value) >= 10**18:
        return "a number beyond 64 bits"
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _bad(name: str, what: str) -> InvalidArgument:
    return InvalidArgument(f"usage {name} {what}", reason="bad-usage")
