"""`engine.store.logindex.LogIndex` on a PostgreSQL store: the same interface, for a viewer.

A viewer pages through the arrow log in worker threads while the engine
writes. Each call runs on a connection of its own, read-only and in
autocommit, so that every query sees what committed before it began (as a
WAL reader does on SQLite) and no reader ever holds a transaction open
against the writers. The connection is closed when the call returns: a
viewer drops readers on every filter change and pages from threads that come
and go, so a connection kept per thread would outlive them unclosed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import Connection
from psycopg.rows import dict_row

from engine.store.log import ArrowLog
from engine.store.logfilter import (
    SUPPRESSED_ROWS,
    LogFilter,
    Positions,
    add_suppressed,
    timeline_counts,
)

__all__ = ["PGLogIndex"]


class PGLogIndex:
    """Positions to rows of a PostgreSQL store's arrow log under one `LogFilter`.

    Args:
        dsn: the store's ``postgresql://`` URL.
        log_filter: what rows to show (None: all).
        schema: the store's schema, or None for the connection's default.
    """

    def __init__(self, dsn: str, log_filter: LogFilter | None = None, *,
                 schema: str | None = None) -> None:
        self.dsn = dsn
        self.schema = schema
        self.filter = log_filter or LogFilter()
        self._positions = Positions(self.filter)

    @contextmanager
    def _db(self) -> Iterator[Connection[Any]]:
        with psycopg.connect(self.dsn, autocommit=True, connect_timeout=10) as conn:
            # A viewer never writes: the server refuses it if a bug tried.
            conn.execute("set default_transaction_read_only = on")
            if self.schema is not None:
                conn.execute("select set_config('search_path', %s, false)", [self.schema])
            yield conn

    @property
    def count(self) -> int:
        """Rows under the filter, as of the last `refresh`."""
        return self._positions.count

    def refresh(self) -> int:
        """Take in rows appended since the last refresh; returns the new count."""
        where, params = self.filter.where("postgresql")
        with self._db() as db:
            def newest() -> int:
                row = db.execute("select coalesce(max(seq), 0) from log").fetchone()
                return int(row[0]) if row else 0

            return self._positions.refresh(newest, lambda last: (int(seq) for (seq,) in db.execute(
                f"select seq from log where seq > %s and {where} order by seq",
                [last, *params])))

    def timeline(self, buckets: int) -> tuple[float, float, dict[str, list[int]]]:
        """Decisions over time under the filter (see `LogIndex.timeline`)."""
        buckets = max(1, buckets)
        where, params = self.filter.where("postgresql")
        with self._db() as db:
            found = db.execute(f"select min(t), max(t) from log where {where}",
                               params).fetchone()
            if found is None or found[0] is None:
                return 0.0, 0.0, timeline_counts((), buckets)
            first, last = float(found[0]), float(found[1])
            span = max(last - first, 1e-9)
            # floor, not a cast: PostgreSQL's cast to integer rounds.
            rows = db.execute(
                f"select least(floor((t - %s) * %s / %s)::bigint, %s) as b, outcome, count(*)"
                f" from log where {where} group by b, outcome",
                [first, buckets, span, buckets - 1, *params]).fetchall()
            suppressed = db.execute(SUPPRESSED_ROWS.format(where=where), params).fetchall()
        return first, last, add_suppressed(timeline_counts(rows, buckets), suppressed, first,
                                           span)

    def seq_at(self, position: int) -> int:
        """The sequence number of the row at ``position`` (0-based)."""
        return self._positions.seq_at(position)

    def page(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Rows at positions ``start`` to ``stop - 1`` (clipped to the count)."""
        span = self._positions.span(start, stop)
        if span is None:
            return []
        first, last = span
        where, params = self.filter.where("postgresql")
        with self._db() as db:
            rows = db.cursor(row_factory=dict_row).execute(
                f"select * from log where seq between %s and %s and {where} order by seq",
                [first, last, *params]).fetchall()
        return [ArrowLog._decode(dict(r)) for r in rows]

    def row(self, seq: int) -> dict[str, Any] | None:
        """One row by sequence number."""
        with self._db() as db:
            found = db.cursor(row_factory=dict_row).execute(
                "select * from log where seq = %s", [seq]).fetchone()
        return ArrowLog._decode(dict(found)) if found else None

    def close(self) -> None:
        """Nothing to close: no connection outlives a call (`LogIndex.close`'s twin)."""
