"""SPEC §6: a rolling-window rate limit admits at most its limit in any window of real
elapsed time however the wall clock steps back — by any amount, however often (a person
fixing the date back, a VM's clock put right after a restore, NTP slewing it) — and then
runs on.

The engine's time (`SteadyClock`) stands still while the clock is behind the time it
handed out, so calls admitted meanwhile stay in their window until the clock catches
up. Checked over random runs and steps back (hypothesis), as the engine checks and
counts a call (`RateCounters.retry_after`, then `count` at the same time).

A step *forward* is not covered, even one back to where the clock was: the calls
admitted while time stood still are stamped with the time it stood at, and a step
forward (from the engine's one clock, not told apart from time passing) takes them out
of their window by as long as it stood. (Hypothesis found it in round 26: 6 calls at the
standing time, the clock put forward 60 s, 6 more at once.) README, "Decisions where the
spec is silent", round 26.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.app.replay import VirtualClock
from engine.core.catalogue import RateLimit
from engine.core.limits import RateCounters, SteadyClock

LIMIT, PERIOD = 6, 60.0
T0 = 1_800_000_000.0

#: (seconds of real time that pass, then how far the wall clock steps): small and large
#: runs and steps, forward and back, and the edges of the window.
_STEP = st.tuples(
    st.one_of(st.floats(0.0, 90.0), st.sampled_from([0.0, PERIOD, PERIOD / LIMIT])),
    st.one_of(st.floats(-7200.0, 7200.0), st.sampled_from([0.0, -PERIOD, PERIOD, 1e-9])))


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(_STEP, max_size=60))
def test_no_window_of_real_time_admits_more_than_the_limit(
        steps: list[tuple[float, float]]) -> None:
    """One call tried after each step; those admitted, by real time, never exceed the
    limit in any half-open window (r − 60, r] of real time."""
    wall = VirtualClock(T0)
    clock = SteadyClock(wall)
    counters = RateCounters({"k": RateLimit("k", LIMIT, PERIOD)})
    real, offset, admitted = 0.0, 0.0, []
    ahead: float | None = None  # how far ahead of real time the clock was at its first look
    for run, step in steps:
        real += run
        # Back by any amount; never forward (see the module's docstring). Its error at
        # the engine's first look is any: that is where the engine's time begins.
        if ahead is None:
            offset = ahead = step
        else:
            offset += min(step, 0.0)
        wall.t = T0 + real + offset
        now = clock()
        if counters.retry_after("c1", "k", now) is None:
            counters.count("c1", "k", now)
            admitted.append(real)
    for r in admitted:
        inside = [x for x in admitted if r - PERIOD < x <= r]
        assert len(inside) <= LIMIT, (r, inside)
