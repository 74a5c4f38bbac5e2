"""Rolling windows: exact, half-open, never more than the limit in any window."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.limits import RollingWindow


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
