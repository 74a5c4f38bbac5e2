"""An export reads the log a page at a time, by sequence number after the last page's
end, and writes exactly the records a read of the whole log gives (SPEC §10.1).

(Found by a helper: ``GET /v1/log/export`` and ``arrowgate log export`` read the whole
log into memory before writing a line; the service did it on its event loop.)"""

from __future__ import annotations

import pytest

from engine import Engine
from engine.app.export import decision_record, record_pages


async def _log(world: Engine) -> None:
    for i in range(7):
        await world.call("c1", "terminals.write", "t1", {"text": f"line {i}"})
        await world.call("c1", "agents.prompt", "a2", {"text": "not connected"})  # denied


def _flat(pages: object) -> list[dict[str, object]]:
    return [record for page in pages for record in page]  # type: ignore[attr-defined]


@pytest.mark.parametrize("filters", [{}, {"card": "c1"}, {"arrow": "e3"},
                                     {"outcome": "denied"}])
async def test_pages_give_the_records_of_the_whole_log(world: Engine, filters) -> None:
    """Pages of any size, under any filter, add up to the records of one whole read."""
    # GIVEN a log of accepted and refused calls
    await _log(world)
    whole = [decision_record(row) for row in world.log_rows(**filters)]
    assert whole
    # WHEN it is read a page at a time THEN the records are the same, in the same order
    for page in (1, 3, len(whole), len(whole) + 1):
        pages = list(record_pages(world.log_rows, upto=world.log_end(), page=page, **filters))
        assert _flat(pages) == whole
        assert max(len(p) for p in pages) <= page


async def test_an_export_ends_at_the_newest_row_when_it_began(world: Engine) -> None:
    """Rows appended while an export runs are not part of it."""
    await _log(world)
    end = world.log_end()
    pages = record_pages(world.log_rows, upto=end, page=4)
    first = next(pages)
    await world.call("c1", "terminals.write", "t1", {"text": "later"})
    rest = _flat(pages)
    assert [r["seq"] for r in first + rest] == list(range(1, end + 1))


async def test_an_empty_log_exports_nothing_and_a_page_holds_a_row(world: Engine) -> None:
    """An empty log gives no page; a page of no rows is refused, naming the page size."""
    assert world.log_end() == 0
    assert list(record_pages(world.log_rows, upto=0)) == []
    with pytest.raises(ValueError, match="at least 1 row, not 0"):
        list(record_pages(world.log_rows, upto=0, page=0))
