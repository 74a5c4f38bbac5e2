"""The stable JSON Lines export of the arrow log (``arrowgate log export --jsonl``).

One decision per line, in the style of OPA's decision logs. Schema version 1;
fields are only ever added, never renamed or removed:

====================  ==========================================================
``schema``            ``"arrowgate.decision/1"``
``decision_id``       ``"<seq>-<first 16 hex of the row hash>"``
``seq``               the row's sequence number in the log (1, 2, …)
``timestamp``         seconds (the engine's clock), as a number (null only on a row
                      altered by hand whose time is no finite number: see
                      ``unreadable``)
``workspace``         workspace id, or null
``input``             ``{"card", "package", "version", "call", "target",
                      "arrow", "payload", "chain", "payload_bytes",
                      "payload_sha256"}`` — what was asked, on which arrow; the
                      last two (null unless set) are the full UTF-8 length and
                      SHA-256 of a refused call's payload when the row keeps only
                      its first 4 KiB (SPEC §8 "Bounds")
``result``            ``{"outcome", "code", "reason", "approver", "prompt"}`` — what
                      was decided (``outcome``: ok, queued, held, denied,
                      rate-limited, approved, rejected, expired, cancelled,
                      suppressed)
``chain``             ``{"prev", "hash"}`` — the hash chain, for independent checks
``unreadable``        only on a row altered by hand (verify names it): each field
                      whose stored value does not decode, as its stored text
                      (bytes that are not UTF-8 escaped, ``A\\xffB``;
                      ``input.chain`` is then null; `engine.store.decoding`)
====================  ==========================================================

The JSON Schema of a record is ``schemas/decision-record.json``. Anyone can check
an export without arrowgate: the README's "Verifying an exported log" gives the
canonical JSON of a row and the hash inputs (``chain.hash`` is the SHA-256 of
``chain.prev``, a newline and the row's 16 fields as canonical JSON, with
``payload_bytes`` and ``payload_sha256`` appended when either is set).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from engine.store.decoding import UNREADABLE

__all__ = ["EXPORT_PAGE", "SCHEMA", "decision_record", "record_pages", "row_pages"]

SCHEMA = "arrowgate.decision/1"

#: Rows an export reads at a time. A page is what an export holds in memory (each
#: row's payload up to its workspace's ``max_payload``, 256 KiB by default) and, in
#: the service, what it reads between two turns of the event loop.
EXPORT_PAGE = 100


def decision_record(row: dict[str, Any]) -> dict[str, Any]:
    """One log row as a decision record of the export schema."""
    record = {
        "schema": SCHEMA,
        # str(): a damaged row's hash (NULL, a number) is exported as it is, never a crash.
        "decision_id": f"{row['seq']}-{str(row['hash'])[:16]}",
        "seq": row["seq"],
        "timestamp": row["t"],
        "workspace": row["workspace"],
        "input": {k: row.get(k) for k in ("card", "package", "version", "call", "target", "arrow",
                                       "payload", "chain", "payload_bytes",
                                       "payload_sha256")},
        "result": {k: row[k] for k in ("outcome", "code", "reason", "approver", "prompt")},
        "chain": {"prev": row["prev"], "hash": row["hash"]},
    }
    unreadable = dict(row.get(UNREADABLE) or {})
    t = row["t"]
    if type(t) not in (int, float) or not math.isfinite(t):
        # A time altered by hand (text, an infinity SQLite keeps): Python's json would
        # write an infinity as a bare Infinity, which no other JSON reader reads.
        record["timestamp"] = None
        unreadable["timestamp"] = t if type(t) is str else repr(t)
    if unreadable:
        record[UNREADABLE] = unreadable
    return record


def record_pages(read: Callable[..., list[dict[str, Any]]], *, upto: int,
                 page: int = EXPORT_PAGE,
                 **filters: Any) -> Iterator[list[dict[str, Any]]]:
    """The decision records of the log's rows, a page at a time, in sequence order.

    Each page is read by sequence number after the previous page's last row
    (``read(after=…, limit=page, **filters)``, an ``ArrowLog.rows``), so an
    export of any size holds one page, never the log.

    Args:
        read: the log's ``rows`` (filters, ``after``, ``limit``).
        upto: the newest row's number when the export began (0: the log was
            empty); rows appended while it runs are left out, as a read of the
            whole log at its start leaves them out.
        page: rows a page (at least 1).
        **filters: the log filters, passed to ``read``.
    """
    for rows in row_pages(read, upto=upto, page=page, **filters):
        records = [decision_record(row) for row in rows]
        # Let go of this page before the next is read: one page in memory, not two.
        del rows
        yield records
        del records


def row_pages(read: Callable[..., list[dict[str, Any]]], *, upto: int,
              page: int = EXPORT_PAGE, **filters: Any) -> Iterator[list[dict[str, Any]]]:
    """The log's rows up to ``upto`` under ``filters``, a page at a time, in sequence order
    (`record_pages`' reading, its arguments the same): never an empty page."""
    if page < 1:
        raise ValueError(f"page must be at least 1 row, not {page}")
    after = 0
    while after < upto:
        rows = read(after=after, limit=page, **filters)
        if not rows:
            return
        full, after = len(rows) == page, rows[-1]["seq"]
        if rows[-1]["seq"] > upto:
            rows = [row for row in rows if row["seq"] <= upto]
        if rows:
            yield rows
        del rows
        if not full:
            return
