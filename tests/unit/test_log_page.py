"""A page of ``GET /v1/log`` is bounded in rows and in payload bytes, and says where the
next one starts (`engine.service.logpage`).

(Found by a helper: the route answered any ``limit`` up to 100,000 rows in one answer.)"""

from __future__ import annotations

from typing import Any

import pytest

from engine.service.logpage import MAX_BYTES, MAX_ROWS, log_page


def _log(sizes: list[int]) -> Any:
    rows = [{"seq": i + 1, "payload": "x" * n} for i, n in enumerate(sizes)]
    reads: list[int] = []

    def read(*, after: int | None, limit: int, **filters: Any) -> list[dict[str, Any]]:
        reads.append(limit)
        return [r for r in rows if r["seq"] > (after or 0)][:limit]

    read.reads = reads  # type: ignore[attr-defined]
    return read


def test_a_page_ends_at_its_limit_and_says_where_to_go_on() -> None:
    """``next`` is the last row's number while rows may follow, None at the log's end."""
    read = _log([10] * 25)
    rows, following = log_page(read, after=None, limit=10)
    assert [r["seq"] for r in rows] == list(range(1, 11)) and following == 10
    rows, following = log_page(read, after=20, limit=10)
    assert [r["seq"] for r in rows] == list(range(21, 26)) and following is None


def test_a_page_ends_early_once_its_payloads_pass_the_byte_bound() -> None:
    """Rows of large payloads fill a page by bytes, not by count; at least one row comes."""
    big = 1024 * 1024
    rows, following = log_page(_log([big] * 50), after=None, limit=MAX_ROWS)
    assert len(rows) == MAX_BYTES // big and following == rows[-1]["seq"]
    rows, following = log_page(_log([MAX_BYTES * 2]), after=None, limit=5)
    assert len(rows) == 1 and following == 1


def test_a_limit_outside_the_bound_is_refused_naming_it() -> None:
    """0 rows or more than MAX_ROWS is a ValueError naming the limit; nothing is read."""
    read = _log([1])
    for limit in (0, MAX_ROWS + 1):
        with pytest.raises(ValueError, match=f"limit must be 1 to {MAX_ROWS} rows, not {limit}"):
            log_page(read, after=None, limit=limit)
    assert read.reads == []
