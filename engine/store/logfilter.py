"""What rows of the arrow log a viewer shows (`LogFilter`), for both stores' readers.

Kept apart from `engine.store.logindex` so that the PostgreSQL reader
(`engine.store.pg.logindex`) and the SQLite one share it without importing
each other.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any

from engine.store.decoding import loads
from engine.store.logkeys import key_of, keyed_condition

__all__ = ["LOG_OUTCOMES", "SUPPRESSED_ROWS", "TIMELINE_KIND", "LogFilter", "Positions",
           "add_suppressed", "timeline_counts"]

#: Every outcome a log row can have (SPEC §8), for ``--outcome`` and the service's
#: ``outcome=``; a tool call's resolution (SPEC §9) is also ``answered`` or ``failed``.
LOG_OUTCOMES = ("ok", "queued", "held", "denied", "rate-limited", "approved", "rejected",
                "expired", "cancelled", "suppressed", "answered", "failed")


@dataclass(frozen=True, slots=True)
class LogFilter:
    """What rows to show; None means any."""

    arrow: str | None = None
    card: str | None = None
    package: str | None = None
    call: str | None = None
    outcome: str | None = None
    since: float | None = None
    until: float | None = None
    target: str | None = None  #: the node called (an agent, a terminal, a card, a host)
    #: free text, case-insensitive, in the payload, card, target, call, code or reason
    text: str | None = None

    @property
    def empty(self) -> bool:
        """No condition at all."""
        return all(getattr(self, f.name) is None for f in fields(self))

    @property
    def sole_key(self) -> tuple[str, str] | None:
        """The card or the arrow with its value, when it is the filter's only condition."""
        given = [(f.name, getattr(self, f.name)) for f in fields(self)
                 if getattr(self, f.name) is not None]
        if len(given) == 1 and given[0][0] in ("card", "arrow"):
            return given[0]
        return None

    def where(self, dialect: str = "sqlite", *, after: int | None = None,
              upto: int | None = None, keyed: bool = False) -> tuple[str, list[Any]]:
        """The SQL condition and its parameters, for ``sqlite`` or ``postgresql``.

        ``after`` and ``upto`` bound the rows' sequence numbers (``seq > after``,
        ``seq <= upto``). ``keyed`` (SQLite, when its side tables are there): an
        arrow, else a card, is read through its side table
        (`engine.store.logkeys.keyed_condition`), which the bounds narrow too; an
        arrow's rows are a part of its card's, so with both the card is only checked.
        """
        if dialect not in ("sqlite", "postgresql"):
            raise ValueError(f"no SQL dialect {dialect!r} (sqlite or postgresql)")
        mark = "?" if dialect == "sqlite" else "%s"
        parts: list[str] = []
        params: list[Any] = []
        if after is not None:
            parts.append(f"seq > {mark}")
            params.append(after)
        if upto is not None:
            parts.append(f"seq <= {mark}")
            params.append(upto)
        key = key_of(self.arrow, self.card) if keyed and dialect == "sqlite" else None
        for col in ("arrow", "card", "package", "call", "outcome", "target"):
            value = getattr(self, col)
            if value is None:
                continue
            if col == key:
                part, values = keyed_condition(col, value, after=after, upto=upto)
                parts.append(part)
                params.extend(values)
            else:
                parts.append(f"{col} = {mark}")
                params.append(value)
        if self.since is not None:
            parts.append(f"t >= {mark}")
            params.append(self.since)
        if self.until is not None:
            parts.append(f"t <= {mark}")
            params.append(self.until)
        if self.text is not None:
            # instr (strpos), not like: the text is literal (no % or _ wildcards).
            find = "instr" if dialect == "sqlite" else "strpos"
            parts.append(f"{find}(lower(coalesce(payload, '') || ' ' || coalesce(card, '') || ' '"
                         " || coalesce(target, '') || ' ' || coalesce(call, '') || ' '"
                         " || coalesce(code, '') || ' ' || coalesce(reason, '')),"
                         f" lower({mark})) > 0")
            params.append(self.text)
        return (" and ".join(parts) or ("1" if dialect == "sqlite" else "true")), params


#: The timeline's kind of each outcome (`LogIndex.timeline`).
TIMELINE_KIND = {"ok": "allowed", "queued": "allowed", "approved": "allowed",
                  "denied": "refused", "rate-limited": "refused", "rejected": "refused",
                  "expired": "refused", "cancelled": "refused", "held": "held"}


def timeline_counts(rows: Iterable[tuple[Any, Any, Any]],
                    buckets: int) -> dict[str, list[int]]:
    """Fold ``(bucket, outcome, count)`` rows of a grouped query into the timeline's counts.

    Outcomes the timeline does not chart this way are left out: ``suppressed`` rows
    stand for many refusals each (`add_suppressed`).
    """
    counts = {kind: [0] * buckets for kind in ("allowed", "refused", "held")}
    for bucket, outcome, count in rows:
        kind = TIMELINE_KIND.get(str(outcome))
        if kind is not None:
            counts[kind][int(bucket)] += int(count)
    return counts


#: The query `add_suppressed` reads, after ``where`` (the filter's condition).
SUPPRESSED_ROWS = "select t, payload from log where ({where}) and outcome = 'suppressed'"


def add_suppressed(counts: dict[str, list[int]], rows: Iterable[tuple[Any, Any]],
                   first: float, span: float) -> dict[str, list[int]]:
    """Chart each ``suppressed`` row (``t``, payload) as the refusals it sums up.

    One such row stands for every refusal of a card beyond ``denial_log_limit``
    (SPEC §8): charted as one, a flood of thousands would show as a trickle of
    at most the limit a minute. A payload that does not say how many (altered
    by hand) counts as one; `log verify` names that row.
    """
    buckets = len(counts["refused"])
    for t, payload in rows:
        count = _refusals(payload)
        try:
            bucket = int((float(t) - first) * buckets / span)
        except (TypeError, ValueError, OverflowError):
            continue  # a time altered by hand: no place on the chart
        counts["refused"][min(max(bucket, 0), buckets - 1)] += count
    return counts


def _refusals(payload: Any) -> int:
    """How many refusals a ``suppressed`` row's payload says it sums up; 1 when it does
    not say (altered by hand: not JSON, nested past the recursion limit, no count)."""
    # Through `decoding`, as every reader of stored JSON: a bare json.loads raised
    # RecursionError on a payload nested 100,000 deep and ended the chart.
    decoded = loads(payload)
    count = decoded.get("count") if type(decoded) is dict else None
    return count if type(count) is int and count >= 1 else 1


class Positions:
    """A viewer's positions (0-based) to the sequence numbers of the rows a filter shows.

    With no filter, row ``seq`` is at position ``seq - 1`` (sequence numbers
    have no gaps), so nothing is kept; under a filter, the sequence numbers
    are kept in an ``array`` (8 bytes a row, however many rows).
    """

    def __init__(self, log_filter: LogFilter) -> None:
        self._all = log_filter.empty
        self._seqs = array("q")
        # Why a lock: a viewer refreshes in worker threads, and a thread worker
        # that a newer one replaced still runs to its end. Two refreshes that
        # both read `last_seq` before either took its rows in would take the
        # same rows twice (a row shown twice, the count too high).
        self._lock = threading.Lock()
        self.last_seq = 0  #: the newest sequence number taken in
        self.count = 0  #: rows under the filter

    def refresh(self, newest: Callable[[], int],
                newer: Callable[[int], Iterable[int]]) -> int:
        """Take in the rows appended since the last refresh; returns the count.

        ``newest()`` is the log's newest sequence number (read when there is
        no filter); ``newer(seq)`` the matching sequence numbers after
        ``seq``, in order (read under a filter). One refresh at a time.
        """
        with self._lock:
            if self._all:
                self.take_all(newest())
            else:
                self.take(newer(self.last_seq))
            return self.count

    def take_all(self, newest: int) -> None:
        """No filter: the log's newest sequence number is the count."""
        self.count = self.last_seq = newest

    def take(self, seqs: Iterable[int]) -> None:
        """Under a filter: sequence numbers newer than `last_seq`, in order."""
        self._seqs.extend(seqs)
        if self._seqs:
            self.last_seq = self._seqs[-1]
        self.count = len(self._seqs)

    def seq_at(self, position: int) -> int:
        """The sequence number of the row at ``position``."""
        return position + 1 if self._all else self._seqs[position]

    def span(self, start: int, stop: int) -> tuple[int, int] | None:
        """First and last sequence numbers of positions ``start`` to ``stop - 1``
        (clipped to the count), or None when that is no row."""
        start, stop = max(0, start), min(stop, self.count)
        if start >= stop:
            return None
        return self.seq_at(start), self.seq_at(stop - 1)
