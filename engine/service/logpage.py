"""One page of the arrow log for ``GET /v1/log``: bounded in rows and in bytes.

Any token that may read the log (a card reads its own rows) chooses what it
asks for, and the route answers on the service's event loop. So an answer is
bounded whatever is asked: at most `MAX_ROWS` rows, and rows are added only
while their payloads stay under `MAX_BYTES` (a row's payload may be up to its
workspace's ``max_payload``). A caller pages on with ``after``: the answer's
``next``, the last row's sequence number, while more rows may follow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["MAX_BYTES", "MAX_ROWS", "READ_STEP", "log_page"]

#: The most rows one answer holds (the route's ``limit`` is at most this).
MAX_ROWS = 1000
#: Payload bytes after which an answer ends early (it still holds at least one row).
MAX_BYTES = 4 * 1024 * 1024
#: Rows read from the store at a time while a page fills: a read holds this many
#: rows' payloads at most, however large the workspace's ``max_payload``.
READ_STEP = 100
#: What a row costs besides its payload, for the byte bound (its ids, times, hashes).
_ROW_BYTES = 512


def _size(row: dict[str, Any]) -> int:
    payload = row.get("payload")
    return _ROW_BYTES + (len(payload) if isinstance(payload, str) else 0)


def log_page(read: Callable[..., list[dict[str, Any]]], *, after: int | None, limit: int,
             **filters: Any) -> tuple[list[dict[str, Any]], int | None]:
    """Up to ``limit`` rows numbered above ``after`` under ``filters``, and where to go on.

    Args:
        read: the log's ``rows`` (filters, ``after``, ``limit``).
        after: only rows numbered above it (None: from the first row).
        limit: the most rows wanted, 1 to `MAX_ROWS`.
        **filters: the log filters, passed to ``read``.

    Returns:
        The rows, and ``next``: the ``after`` of the following page while more rows
        may follow (the page ended at ``limit`` or at `MAX_BYTES`), None once the
        rows read reached the log's end.

    Raises:
        ValueError: ``limit`` is outside 1 to `MAX_ROWS`.
    """
    if not 1 <= limit <= MAX_ROWS:
        raise ValueError(f"limit must be 1 to {MAX_ROWS} rows, not {limit}")
    rows: list[dict[str, Any]] = []
    size = 0
    while len(rows) < limit:
        want = min(READ_STEP, limit - len(rows))
        got = read(after=after, limit=want, **filters)
        for row in got:
            rows.append(row)
            after = row["seq"]
            size += _size(row)
            if size >= MAX_BYTES:
                return rows, after
        if len(got) < want:
            return rows, None
    return rows, after
