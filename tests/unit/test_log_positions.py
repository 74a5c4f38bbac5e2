"""A viewer's positions under concurrent refreshes (`engine.store.logfilter.Positions`).

A TUI refreshes its log view in thread workers; one that a newer worker
replaced still runs to its end, so two refreshes of one index can overlap.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from engine.store.logfilter import LogFilter, Positions

_LOG = [3, 5, 9]  # the sequence numbers a filter matches


def test_overlapping_refreshes_take_each_row_once() -> None:
    """A refresh that starts while another is reading does not take its rows again."""
    positions = Positions(LogFilter(target="shell"))
    first_reading = threading.Event()
    second_read = threading.Event()

    def newer_first(last: int) -> Iterator[int]:
        first_reading.set()
        # Without one refresh at a time the second reads from the same
        # last_seq in the meantime (and sets the event); with it, it waits.
        second_read.wait(timeout=0.5)
        return (s for s in _LOG if s > last)

    def newer_second(last: int) -> Iterator[int]:
        second_read.set()
        return (s for s in _LOG if s > last)

    first = threading.Thread(target=positions.refresh, args=(lambda: 0, newer_first))
    first.start()
    assert first_reading.wait(timeout=5)
    second = threading.Thread(target=positions.refresh, args=(lambda: 0, newer_second))
    second.start()
    first.join(timeout=5)
    second.join(timeout=5)
    assert positions.count == 3
    assert [positions.seq_at(i) for i in range(positions.count)] == _LOG
    assert positions.last_seq == 9


def test_refresh_without_a_filter_counts_the_newest() -> None:
    """No filter: the count is the newest sequence number; nothing is read by filter."""
    positions = Positions(LogFilter())

    def never(last: int) -> Iterator[int]:
        raise AssertionError("an unfiltered refresh reads no filtered rows")

    assert positions.refresh(lambda: 7, never) == 7
    assert positions.seq_at(6) == 7
