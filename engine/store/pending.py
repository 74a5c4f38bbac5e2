"""Pending summaries of suppressed refusals, as the store keeps them (SPEC §8 "Bounds").

Refusals beyond a card's ``denial_log_limit`` get no log row of their own; they
are counted toward one ``suppressed`` row. Until that row is written, the count
is a row of the ``suppressed_pending`` table: one per budget key (a card, the
sender of refused port deliveries, or the key shared by ids no node has),
written in the same batch as the refusal that changed it, so the answer to a
suppressed refusal is durable like any other, and a killed process leaves its
counts for the next engine that opens the store to write
(`engine.services.record.Recorder.flush_suppressed`).

A row is its key and the summary as JSON text (count, codes, calls, first and
last time, and whose refusals they are): nothing reads it but the engine, as a
whole, and one text column is one value to bind however often it changes.
This module holds what both stores share; the table itself is made by each
store's migrations (SQLite's m014, PostgreSQL's m004).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from engine.core.limits import Suppressed

__all__ = ["UNKNOWN_KEY", "encode", "key_of", "row_key", "summary_of"]

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


def encode(held: Suppressed) -> str:
    """The ``summary`` column of a pending summary (its times exact: JSON floats
    round-trip through Python's ``repr``)."""
    return json.dumps({"card": held.card, "package": held.package,
                       "workspace": held.workspace, "target": held.target,
                       "first": held.first, "last": held.last, "count": held.count,
                       "codes": held.codes, "calls": held.calls}, sort_keys=True)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _time(value: Any) -> float:
    return float(value) if type(value) in (int, float) else 0.0


def _counter(value: Any) -> Counter[str]:
    if not isinstance(value, dict):
        return Counter()
    return Counter({str(k): v for k, v in value.items() if type(v) is int and v > 0})


def summary_of(key: Any, text: Any) -> tuple[str | None, Suppressed]:
    """A stored row as its budget key and summary.

    A summary that is not the object `encode` writes (a row written around the
    engine) is read as far as it goes, never refused: its ``suppressed`` row is
    still written, and that row is what a reader of the log judges.
    """
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        value = {}
    count = value.get("count")
    return key_of(str(key)), Suppressed(
        _text(value.get("card")), _text(value.get("package")), _text(value.get("workspace")),
        _time(value.get("first")), _time(value.get("last")),
        count if type(count) is int and count > 0 else 0,
        _counter(value.get("codes")), _counter(value.get("calls")),
        target=_text(value.get("target")))
