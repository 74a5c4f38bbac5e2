"""A rate window is (t − P, t] in exact arithmetic on the times (SPEC §6 "Precisely"):
a call at x still counts at t when x > t − P, however ``x + P`` rounds.

Found in round 19: the window was tested as ``x + P > t`` in floats. Where the sum
crosses a power of two it is rounded, and when it rounded onto t the call at x had
"left" although it lay 60 − 2⁻⁴³ s before t: a 7th prompt went through in a window
already holding 6 (and a second clipboard copy in under a second).
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.app.replay import VirtualClock
from engine.core.limits import RollingWindow

from ..conftest import manifest, offer_install

#: Six prompts at X; X + 60 is 1060.5 + 2⁻⁴³, which floats round to 1060.5.
X = 1000.5 + 2.0**-43


async def test_a_seventh_prompt_an_ulp_inside_the_minute_is_refused(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """6 prompts at X; at X + 60 − 2⁻⁴³ the 7th is refused, an ulp after X + 60 it goes."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "status": "working"},
                          workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    clock.t = X
    for i in range(6):
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})).allowed
    clock.t = 1060.5
    assert X + 60 == clock.t and Fraction(clock.t) - Fraction(X) < 60
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "7th"})
    assert d.code == "RATE_LIMITED" and d.retry_after is not None and d.retry_after > 0
    clock.t = math.nextafter(1060.5, math.inf)
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "7th"})).allowed


@settings(max_examples=500, deadline=None)
@given(power=st.integers(-4, 40), share=st.floats(0, 1), period=st.sampled_from([1.0, 60.0, 0.1]),
       nudge=st.integers(-2, 2), ulps=st.integers(-2, 2))
def test_a_window_holds_exactly_the_calls_after_t_minus_p(power: int, share: float, period: float,
                                                          nudge: int, ulps: int) -> None:
    """Limit 1, a call at x just before a power of two less P (where ``x + P`` rounds) and
    t about ``x + P``: the call at t fits exactly when x ≤ t − P in exact arithmetic, a
    refusal says a wait above 0, and counting at t drops x exactly when it has left."""
    x = _nudged(2.0**power - share * period, ulps)
    t = _nudged(x + period, nudge)
    window = RollingWindow(1, period)
    window.count(x)
    wait = window.retry_after(t)
    left = Fraction(x) + Fraction(period) <= Fraction(t)
    assert (wait is None) == left, (x, period, t)
    assert wait is None or wait > 0
    window.count(t)
    assert list(window.times) == ([t] if left else [x, t])


def _nudged(t: float, ulps: int) -> float:
    """``t`` moved ``ulps`` floats up (or down)."""
    for _ in range(abs(ulps)):
        t = math.nextafter(t, math.inf if ulps > 0 else -math.inf)
    return t
