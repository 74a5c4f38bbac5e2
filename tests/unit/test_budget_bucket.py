"""SPEC §6 "Workspace budget": the leaky bucket's arithmetic (`engine.core.budget`).

Rule: a budget ``(count, seconds)`` lets ``count`` deliveries through at once and
``count`` per ``seconds`` sustained; ``due`` says when the next unit frees; a level
above a lowered budget counts as full; an unreadable stored row reads full, and drains
at the budget's rate from the first time it is tried.

(Found in round 18: the bucket lived in each engine's memory as an aiolimiter limiter;
it is the store's now, and this arithmetic is what every engine applies to it.)
"""

from __future__ import annotations

import math

from engine.core.budget import Bucket, due, take
from engine.store.buckets import bucket_of


def test_a_burst_then_the_sustained_rate() -> None:
    """Three at once, then one each 20 s."""
    bucket, budget = Bucket(), (3, 60.0)
    assert [take(bucket, budget, 100.0) for _ in range(4)] == [True, True, True, False]
    assert due(bucket, budget, 100.0) == 120.0
    assert not take(bucket, budget, 119.9)
    assert take(bucket, budget, 120.0)
    assert not take(bucket, budget, 120.0)


def test_a_lowered_budget_counts_as_full() -> None:
    """Fifty used of a hundred, the budget lowered to one an hour: the next waits an hour."""
    bucket = Bucket(50.0, 10.0)
    assert not take(bucket, (1, 3600.0), 10.0)
    assert due(bucket, (1, 3600.0), 10.0) == 3610.0


def test_time_going_back_leaks_nothing() -> None:
    """Another engine's clock a little behind: the level stands, nothing is given back."""
    bucket = Bucket(3.0, 200.0)
    assert not take(bucket, (3, 60.0), 150.0)
    assert (bucket.level, bucket.at) == (3.0, 200.0)


def test_an_unreadable_row_reads_full() -> None:
    """A row written around the engine with no number in it: full, draining from now."""
    bucket = bucket_of("x", None)
    assert not take(bucket, (3, 60.0), 500.0)
    assert due(bucket, (3, 60.0), 500.0) == 520.0
    assert bucket_of(math.nan, 1.0).level == math.inf
    assert bucket_of(2.0, 7.0) == Bucket(2.0, 7.0)


def test_the_clock_s_run_leaks_for_the_longer_of_the_two_never_their_sum() -> None:
    """While the engine's time stands, the clock's run since the bucket stood so leaks it;
    with the engine's time moving too, the longer of the two counts, not both."""
    bucket = Bucket(3.0, 100.0)
    assert not take(bucket, (3, 60.0), 100.0, ran=19.9)
    assert take(bucket, (3, 60.0), 100.0, ran=20.0)
    both = Bucket(3.0, 100.0)
    assert not take(both, (3, 60.0), 110.0, ran=10.0)  # 10 s each: 10 s, not 20
    assert take(both, (3, 60.0), 110.0, ran=20.0)
    assert both.at == 110.0


def test_no_jump_of_either_clock_frees_more_than_the_burst() -> None:
    """A year of the clock's run, or of the engine's time, frees the budget's three (the
    run is counted once: from the bucket a delivery left, it starts again)."""
    for now, ran in ((100.0, 365 * 86400.0), (100.0 + 365 * 86400.0, 0.0)):
        bucket = Bucket(3.0, 100.0)
        assert take(bucket, (3, 60.0), now, ran)
        assert [take(bucket, (3, 60.0), now) for _ in range(3)] == [True, True, False]
