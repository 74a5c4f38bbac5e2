"""Pending summaries of suppressed refusals, as the store keeps them (SPEC §8 "Bounds").

Refusals beyond a card's ``denial_log_limit`` get no log row of their own; they
are counted toward one ``suppressed`` row. Until that row is written, the count
is a row of the ``suppressed_pending`` table: one per budget key (a card, the
sender of refused port deliveries, or the key shared by ids no node has),
upserted in the same batch as the refusal that changed it, so the answer to a
suppressed refusal is durable like any other, and a killed process leaves its
counts for the next engine that opens the store to write
(`engine.services.record.Recorder.recover_suppressed`).

This module holds what both stores share: the columns, and a summary as the
values of its row and back. The table itself is made by each store's
migrations (SQLite's m014, PostgreSQL's m004).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from engine.core.limits import Suppressed

__all__ = ["PENDING_COLUMNS", "UNKNOWN_KEY", "key_of", "row_key", "summary_of", "values_of"]

#: The table's columns, in the order of `values_of`; ``key`` is the primary key.
PENDING_COLUMNS = ("key", "card", "package", "workspace", "target", "first", "last", "count",
                   "codes", "calls")

#: The stored key of the budget shared by ids no node has (None in memory): a
#: primary key cannot be NULL, and no node has the empty id (`Recorder._budget_of`
#: puts an empty card id in that shared budget too).
UNKNOWN_KEY = ""


def row_key(key: str | None) -> str:
    """A budget key as the table stores it."""
    return UNKNOWN_KEY if key is None else key


def key_of(stored: str) -> str | None:
    """A stored key as the budget key it names."""
    return None if stored == UNKNOWN_KEY else stored


def values_of(key: str | None, held: Suppressed) -> tuple[Any, ...]:
    """The row of ``key``'s pending summary, in the order of `PENDING_COLUMNS`."""
    return (row_key(key), held.card, held.package, held.workspace, held.target, held.first,
            held.last, held.count, json.dumps(held.codes, sort_keys=True),
            json.dumps(held.calls, sort_keys=True))


def _counter(text: Any) -> Counter[str]:
    # The counters as stored; anything else (a row written by hand) counts as
    # nothing named rather than failing the refusal that reads it.
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return Counter()
    return Counter({str(k): v for k, v in value.items() if type(v) is int and v > 0})


def summary_of(row: Sequence[Any]) -> tuple[str | None, Suppressed]:
    """A stored row (its `PENDING_COLUMNS` in order) as its budget key and summary."""
    key, card, package, workspace, target, first, last, count, codes, calls = row
    return key_of(str(key)), Suppressed(
        card, package, workspace, float(first), float(last), int(count),
        _counter(codes), _counter(calls), target=target)
