"""SPEC §6: while the engine's time stands still, how long the clock has run forward since
a stored value stood as it is (`engine.core.standing.RunSince`), what the workspace
budget leaks for meanwhile.

Rule: only forward runs count (a step back counts nothing and the run goes on from the
reading after it); a value changed by anyone else starts the count afresh; while the
clock leads nothing is counted (the engine's time moves with it).
"""

from __future__ import annotations

from engine.app.replay import VirtualClock
from engine.core.limits import SteadyClock
from engine.core.standing import RunSince


def _standing(at: float = 1000.0) -> tuple[VirtualClock, SteadyClock]:
    """A clock stepped back an hour behind the engine's time ``at``."""
    raw = VirtualClock(at)
    clock = SteadyClock(raw)
    clock()
    raw.t -= 3600.0
    return raw, clock


def test_forward_runs_count_and_steps_back_do_not() -> None:
    """20 s, a step back of 50 s, 15 s more: 35 s of run."""
    raw, clock = _standing()
    run = RunSince()
    assert run.ran("w1", "v", clock) == 0.0  # first seen: counted from now
    raw.t += 20.0
    assert run.look("w1", clock) == 20.0
    raw.t -= 50.0
    assert run.look("w1", clock) == 20.0
    raw.t += 15.0
    assert run.ran("w1", "v", clock) == 35.0


def test_a_value_changed_elsewhere_counts_afresh() -> None:
    """Another engine delivered meanwhile (the bucket is not as this engine left it)."""
    raw, clock = _standing()
    run = RunSince()
    run.ran("w1", "v", clock)
    raw.t += 30.0
    assert run.ran("w1", "changed", clock) == 0.0
    raw.t += 5.0
    assert run.ran("w1", "changed", clock) == 5.0
    run.left("w1", "mine", clock)  # this engine left it so now
    raw.t += 2.0
    assert run.ran("w1", "mine", clock) == 2.0


def test_nothing_is_counted_while_the_clock_leads() -> None:
    """The clock caught up: the engine's time moves with it, and counts alone."""
    raw, clock = _standing()
    run = RunSince()
    run.ran("w1", "v", clock)
    raw.t += 4000.0
    assert run.ran("w1", "v", clock) == 0.0
    assert run.look("w1", clock) is None
    run.left("w1", "v", clock)  # not counted: left uncounted
    assert run.look("w1", clock) is None
