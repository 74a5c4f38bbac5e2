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

from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import Connection
from psycopg.rows import dict_row

from engine.store.log import ArrowLog
from engine.store.logfilter import TIMELINE_KIND, LogFilter

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
        self._seqs = array("q")
        self._last_seq = 0
        self._count = 0

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
        return self._count

    def refresh(self) -> int:
        """Take in rows appended since the last refresh; returns the new count."""
        with self._db() as db:
            if self.filter.empty:
                row = db.execute("select coalesce(max(seq), 0) from log").fetchone()
                self._count = self._last_seq = int(row[0]) if row else 0
                return self._count
            where, params = self.filter.where("postgresql")
            cursor = db.execute(f"select seq from log where seq > %s and {where} order by seq",
                                [self._last_seq, *params])
            for (seq,) in cursor:
                self._seqs.append(int(seq))
        if self._seqs:
            self._last_seq = self._seqs[-1]
        self._count = len(self._seqs)
        return self._count

    def timeline(self, buckets: int) -> tuple[float, float, dict[str, list[int]]]:
        """Decisions over time under the filter (see `LogIndex.timeline`)."""
        buckets = max(1, buckets)
        where, params = self.filter.where("postgresql")
        counts = {kind: [0] * buckets for kind in ("allowed", "refused", "held")}
        with self._db() as db:
            found = db.execute(f"select min(t), max(t) from log where {where}",
                               params).fetchone()
            if found is None or found[0] is None:
                return 0.0, 0.0, counts
            first, last = float(found[0]), float(found[1])
            span = max(last - first, 1e-9)
            # floor, not a cast: PostgreSQL's cast to integer rounds.
            rows = db.execute(
                f"select least(floor((t - %s) * %s / %s)::bigint, %s) as b, outcome, count(*)"
                f" from log where {where} group by b, outcome",
                [first, buckets, span, buckets - 1, *params]).fetchall()
        for bucket, outcome, count in rows:
            kind = TIMELINE_KIND.get(str(outcome))
            if kind is not None:
                counts[kind][int(bucket)] += int(count)
        return first, last, counts

    def seq_at(self, position: int) -> int:
        """The sequence number of the row at ``position`` (0-based)."""
        return position + 1 if self.filter.empty else self._seqs[position]

    def page(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Rows at positions ``start`` to ``stop - 1`` (clipped to the count)."""
        start, stop = max(0, start), min(stop, self._count)
        if start >= stop:
            return []
        first, last = self.seq_at(start), self.seq_at(stop - 1)
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
