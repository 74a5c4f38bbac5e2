"""Random access to a filtered arrow log of any size, for virtual scrolling.

A viewer shows a window of rows out of possibly millions. `LogIndex` maps a
row's *position* in the filtered log to its sequence number and fetches a
page of rows by position, on a read-only connection of its own per thread,
so a UI can page in a worker thread while the engine writes (WAL readers
never block the writer).

Without filters the positions are the sequence numbers themselves (the log
is gapless from 1, which `ArrowLog.verify` checks), so opening costs one
query. With filters it keeps the matching sequence numbers in a compact
array (8 bytes a row) and extends it as rows arrive (`refresh`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from engine.core.errors import StoreFailed
from engine.store.anchor import AnchorFile
from engine.store.database import connect_read_only
from engine.store.decoding import marked_text
from engine.store.log import ArrowLog, Verification, verify_anchored
from engine.store.logfilter import (
    SUPPRESSED_ROWS,
    TIMELINE_KIND,
    LogFilter,
    Positions,
    add_suppressed,
    timeline_counts,
)
from engine.store.logkeys import has_keys, keyed_seqs
from engine.store.migrations import migrations
from engine.store.reading import PlainDatabase

__all__ = ["TIMELINE_KIND", "LogFilter", "LogIndex", "LogReader", "is_store_url", "open_log_index",
           "verify_path"]


def is_store_url(location: str | Path) -> bool:
    """True when ``location`` is a PostgreSQL store's URL rather than a SQLite file."""
    return str(location).startswith(("postgresql://", "postgres://"))


class LogReader(Protocol):
    """What a viewer reads the log through: `LogIndex`, or its PostgreSQL twin."""

    filter: LogFilter

    @property
    def count(self) -> int:
        """Rows under the filter, as of the last `refresh`."""

    def refresh(self) -> int:
        """Take in rows appended since the last refresh; returns the new count."""

    def timeline(self, buckets: int) -> tuple[float, float, dict[str, list[int]]]:
        """Decisions over time under the filter."""

    def seq_at(self, position: int) -> int:
        """The sequence number of the row at ``position``."""

    def page(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Rows at positions ``start`` to ``stop - 1``."""

    def row(self, seq: int) -> dict[str, Any] | None:
        """One row by sequence number."""

    def close(self) -> None:
        """Close this thread's connection."""


def open_log_index(location: str | Path, log_filter: LogFilter | None = None) -> LogReader:
    """A `LogIndex` on the SQLite file ``location``, or its PostgreSQL twin
    (`engine.store.pg.logindex.PGLogIndex`, the same interface) on a store's URL."""
    if is_store_url(location):
        from engine.store.pg.logindex import PGLogIndex

        return PGLogIndex(str(location), log_filter)
    return LogIndex(location, log_filter)


def verify_path(path: str | Path) -> Verification:
    """Verify the log of the database at ``path`` and its anchor, on a connection of its own.

    ``path`` may be a PostgreSQL store's URL: its chain, this machine's anchor
    of it and its consent history are verified then.
    Safe from any thread (a viewer verifying a million rows in a worker).

    Raises:
        StoreFailed: reason ``schema-mismatch``: a newer engine migrated the
            database (`Chain.refuse_unknown`) or wrote its anchor in a newer format
            (`AnchorFile.refuse_newer`), so this code cannot judge its rows;
            reason ``no-store``: a PostgreSQL database that holds no store.
    """
    if is_store_url(path):
        from engine.store.pg.store import PGStore

        store = PGStore.open(str(path), existing=True)  # a verify never makes a store
        try:
            return store.verify_log()
        finally:
            store.close()
    conn = connect_read_only(path)
    try:
        # A bare connection, not sqlite-utils': this runs in the verifier process,
        # which would spend more on importing sqlite-utils than on a small log.
        db = PlainDatabase(conn)
        # A newer engine may hash or chain rows as this code does not: its
        # verdict, "ok" or "tampered", would be unfounded.
        migrations.refuse_unknown(db)
        anchor = AnchorFile(str(path) + ".anchor")
        anchor.refuse_newer()  # so may a newer engine's anchor: refused alike
        return verify_anchored(ArrowLog(db), anchor)
    finally:
        conn.close()


class LogIndex:
    """Positions to rows of the arrow log under one `LogFilter`."""

    def __init__(self, path: str | Path, log_filter: LogFilter | None = None) -> None:
        self.path = str(path)
        self.filter = log_filter or LogFilter()
        self._local = threading.local()
        self._positions = Positions(self.filter)

    def _db(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect_read_only(self.path)
            conn.row_factory = sqlite3.Row
            # A row edited by hand into bytes that are not UTF-8 is shown damaged
            # (`ArrowLog._decode` flags it), never an error for the page it is on.
            conn.text_factory = marked_text
            self._local.conn = conn
            # Read-only: a file no newer engine has opened has no side tables.
            self._local.keyed = has_keys(conn)
        return conn

    def _where(self, *, after: int | None = None,
               upto: int | None = None) -> tuple[str, list[Any]]:
        """The filter's condition on this thread's connection (`LogFilter.where`)."""
        self._db()
        return self.filter.where(after=after, upto=upto, keyed=self._local.keyed)

    @property
    def count(self) -> int:
        """Rows under the filter, as of the last `refresh`."""
        return self._positions.count

    def refresh(self) -> int:
        """Take in rows appended since the last refresh; returns the new count."""
        db = self._db()

        def newer(last: int) -> Iterator[int]:
            sole = self.filter.sole_key if self._local.keyed else None
            if sole is not None:
                sql, params = keyed_seqs(*sole, last)
            else:
                where, params = self._where(after=last)
                sql = f"select seq from log where {where} order by seq"
            for (seq,) in db.execute(sql, params):
                yield int(seq)

        return self._positions.refresh(
            lambda: int(db.execute("select coalesce(max(seq), 0) from log").fetchone()[0]),
            newer)

    def timeline(self, buckets: int) -> tuple[float, float, dict[str, list[int]]]:
        """Decisions over time under the filter, for a chart: ``(first t, last t, counts)``.

        ``counts`` maps ``allowed`` (ok, queued, approved), ``refused`` (denied,
        rate-limited, rejected, expired, cancelled, and each ``suppressed`` row as
        the refusals it sums up) and ``held`` to ``buckets`` counts each, the time
        from the first to the last row cut in equal parts. One grouped query and
        one of the suppressed rows; empty counts for an empty log.
        """
        buckets = max(1, buckets)
        db = self._db()
        where, params = self._where()
        first, last = db.execute(f"select min(t), max(t) from log where {where}",
                                 params).fetchone()
        if first is None:
            return 0.0, 0.0, timeline_counts((), buckets)
        span = max(float(last) - float(first), 1e-9)
        rows = db.execute(
            f"select min(cast((t - ?) * ? / ? as integer), ?) as b, outcome, count(*) "
            f"from log where {where} group by b, outcome",
            [first, buckets, span, buckets - 1, *params])
        counts = timeline_counts(rows, buckets)
        suppressed = db.execute(SUPPRESSED_ROWS.format(where=where), params)
        return float(first), float(last), add_suppressed(counts, suppressed, float(first), span)

    def seq_at(self, position: int) -> int:
        """The sequence number of the row at ``position`` (0-based)."""
        return self._positions.seq_at(position)

    def page(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Rows at positions ``start`` to ``stop - 1`` (clipped to the count)."""
        span = self._positions.span(start, stop)
        if span is None:
            return []
        first, last = span
        where, params = self._where(after=first - 1, upto=last)
        rows = self._db().execute(
            f"select * from log where {where} order by seq", params).fetchall()
        return [ArrowLog._decode(dict(r)) for r in rows]

    def row(self, seq: int) -> dict[str, Any] | None:
        """One row by sequence number."""
        found = self._db().execute("select * from log where seq = ?", [seq]).fetchone()
        return ArrowLog._decode(dict(found)) if found else None

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def main(argv: list[str] | None = None) -> int:
    """``python -m engine.store.logindex DB``: verify in a process of its own, print JSON.

    ``DB`` may be a PostgreSQL store's URL, or ``-`` to read it from the first
    line of standard input (a URL may hold a password, which a command line
    shows to every user of the machine).

    A viewer runs this so that hashing a million rows never competes with
    its own drawing for the interpreter lock.
    """
    import json
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m engine.store.logindex DB", file=sys.stderr)
        return 2
    location = sys.stdin.readline().strip() if args[0] == "-" else args[0]
    if not location:
        print("python -m engine.store.logindex: no database named on standard input",
              file=sys.stderr)
        return 2
    try:
        result = verify_path(location)
    except StoreFailed as exc:
        print(f"python -m engine.store.logindex: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.to_json()))
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
