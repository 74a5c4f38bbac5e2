"""Limits (SPEC §6): the steady clock, rolling windows and every card's counters."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.core.catalogue import RateLimit
from engine.core.limits import LATEST, RateCounters, RollingWindow, SteadyClock


class _Clock:
    """A clock a test sets by hand."""

    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_steady_clock_stands_still_until_the_clock_catches_up() -> None:
    """Stepped back, NaN or infinite: the time handed out stays at its high-water mark."""
    clock = _Clock(100.0)
    steady = SteadyClock(clock)
    assert steady() == 100.0
    for t in (50.0, -1e9, math.nan, math.inf, -math.inf):
        clock.t = t
        assert steady() == 100.0
    clock.t = 100.5
    assert steady() == 100.5
    steady.at_least(200.0)
    assert steady() == 200.0
    for bad in (math.nan, math.inf, -math.inf, None, 150.0):
        steady.at_least(bad)
    assert steady() == 200.0
    clock.t = 250.0
    assert steady() == 250.0


def test_steady_clock_before_any_finite_time_is_zero() -> None:
    """A clock that has only said NaN or infinity hands out 0.0, and never less after it."""
    clock = _Clock(math.nan)
    steady = SteadyClock(clock)
    assert steady() == 0.0
    clock.t = math.inf
    assert steady() == 0.0
    clock.t = -5.0
    assert steady() == 0.0
    clock.t = 3.0
    assert steady() == 3.0
    # A clock that starts below zero, finite, is followed as it is.
    early = SteadyClock(_Clock(-5.0))
    assert early() == -5.0


def test_steady_clock_never_hands_out_negative_zero() -> None:
    """-0.0 is 0.0 (a log row at -0.0 would be stored as 0 and never verify)."""
    steady = SteadyClock(_Clock(-0.0))
    assert math.copysign(1.0, steady()) == 1.0


@settings(max_examples=300, deadline=None)
@given(times=st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                st.integers(-10**6, 10**6)), min_size=1, max_size=50),
       floors=st.lists(st.one_of(st.none(), st.floats()), max_size=5))
@example(times=[math.nan, -1.0], floors=[])  # 0.0 before any finite time, then not less
def test_steady_clock_never_goes_backwards(times: list[float], floors: list[float | None]) -> None:
    """Whatever the clock says and whatever floors are set, time handed out never decreases
    and is always finite."""
    clock = _Clock(0.0)
    steady = SteadyClock(clock)
    last = -math.inf
    for i, t in enumerate(times):
        clock.t = t
        if i < len(floors):
            steady.at_least(floors[i])
        now = steady()
        assert math.isfinite(now) and now >= last
        last = now


class _Reference:
    """`SteadyClock` as it was written before its common reading got a path of its own
    (with round 19's rule: a reading beyond ±`LATEST` is no time, as NaN is not)."""

    def __init__(self, clock: _Clock) -> None:
        self.clock, self.high = clock, -math.inf

    def __call__(self) -> float:
        t = float(self.clock()) + 0.0
        if t > self.high and -LATEST < t <= LATEST:
            self.high = t
        if self.high == -math.inf:
            self.high = 0.0
        return self.high


@settings(max_examples=300, deadline=None)
@given(times=st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                st.sampled_from([-0.0, 0.0, math.nan, math.inf, -math.inf]),
                                st.integers(-10**6, 10**6)), min_size=1, max_size=50))
def test_steady_clock_hands_out_what_it_always_did(times: list[float]) -> None:
    """Reading for reading (floats, ints, -0.0, NaN, infinities, steps back), the same
    time as the reference, as a float and with its sign."""
    clock = _Clock(0.0)
    steady, reference = SteadyClock(clock), _Reference(clock)
    for t in times:
        clock.t = t
        got, want = steady(), reference()
        assert type(got) is float and got == want
        assert math.copysign(1.0, got) == math.copysign(1.0, want)


def test_a_window_counts_calls_stamped_after_the_asked_time() -> None:
    """A call counted at a later time (another process's clock) still fills the window."""
    w = RollingWindow(1, 60.0)
    w.count(100.0)
    wait = w.retry_after(40.0)
    assert wait is not None and wait > 0


def test_half_open_window_and_retry_after() -> None:
    """A call at t fits when fewer than N counted calls lie in (t - P, t]."""
    w = RollingWindow(6, 60)
    for t in range(6):
        assert w.retry_after(t) is None
        w.count(t)
    assert w.retry_after(6) == 54
    assert w.retry_after(59.5) == 0.5
    assert w.retry_after(60) is None  # t=0 has left (0, 60]
    w.count(60)
    assert w.retry_after(60.5) == 0.5  # t=1 has not


@settings(max_examples=1000, deadline=None)
@given(limit=st.integers(1, 8), period=st.sampled_from([1.0, 10.0, 60.0]),
       gaps=st.lists(st.floats(0, 30, allow_nan=False), min_size=1, max_size=80))
def test_no_window_ever_admits_more_than_its_limit(limit: int, period: float,
                                                   gaps: list[float]) -> None:
    """Whatever the arrival times, no window (t - P, t] holds more than N accepted calls."""
    w = RollingWindow(limit, period)
    accepted: list[float] = []
    t = 0.0
    for gap in gaps:
        t += gap
        wait = w.retry_after(t)
        if wait is None:
            w.count(t)
            accepted.append(t)
        else:
            assert wait > 0
            # Waiting retry_after makes room (give or take float rounding).
            assert w.retry_after(t + wait + 1e-9) is None
    for end in accepted:
        inside = [a for a in accepted if end < a + period and a <= end]
        assert len(inside) <= limit


def test_counters_keep_a_window_per_card_and_key() -> None:
    """Each (card, key) has its own window; forget drops a card's, load restores them."""
    counters = RateCounters({"prompt": RateLimit("prompt", 2, 10.0),
                             "run": RateLimit("run", 1, 5.0)})
    counters.count("c1", "prompt", 0.0)
    counters.count("c1", "prompt", 1.0)
    assert counters.retry_after("c1", "prompt", 2.0) == 8.0
    assert counters.retry_after("c2", "prompt", 2.0) is None
    assert counters.retry_after("c1", "run", 2.0) is None
    counters.forget("c1")
    assert counters.retry_after("c1", "prompt", 2.0) is None
    # Rows of a key no longer limited are skipped on load.
    counters.load([("c1", "run", 3.0), ("c1", "gone", 3.0)])
    assert counters.retry_after("c1", "run", 4.0) == 4.0
    with pytest.raises(KeyError):
        counters.retry_after("c1", "gone", 4.0)


def test_retry_after_below_the_limit_is_none_whatever_the_times() -> None:
    """Fewer calls than the limit leave room at any time, before or after them."""
    w = RollingWindow(3, 60.0)
    for t in (100.0, 130.0):
        w.count(t)
    for t in (0.0, 100.0, 130.0, 159.9, 1e9):
        assert w.retry_after(t) is None
    w.count(131.0)
    assert w.retry_after(140.0) == 20.0 and w.retry_after(159.5) == 0.5
    assert w.retry_after(160.0) is None  # the call at 100 has left the window
