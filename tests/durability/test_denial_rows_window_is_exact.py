"""A card's refusals get rows of their own up to ``denial_log_limit`` in any 60 s, the
window (t − 60, t] judged in exact arithmetic on the times (SPEC §8 "Bounds"), as the
rate windows are (SPEC §6).

Found in round 19: the window was tested as ``x + 60 > t`` in floats; where the sum
rounded onto t, a refusal 60 − 2⁻⁴³ s old looked gone and one more row was written
than the limit allows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install

#: Two refusals at X; X + 60 is 1060.5 + 2⁻⁴³, which floats round to 1060.5.
X = 1000.5 + 2.0**-43


async def test_a_refusal_an_ulp_inside_the_minute_is_summed_up(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """Limit 2: refusals at X, X, then 1060.5 (inside the minute): the third is suppressed;
    one an ulp after X + 60 has a row again."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws", settings={"denial_log_limit": 2})
    await offer_install(engine, manifest("acme.n", {}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.n"}, workspace="w1")

    async def refused_rows() -> int:
        d = await engine.call("c1", "clipboard.copyText", None, {"text": "x"})
        assert d.code == "PERMISSION_DENIED"
        return sum(1 for r in engine.log_rows(card="c1") if r["outcome"] == "denied")

    clock.t = X
    assert [await refused_rows(), await refused_rows()] == [1, 2]
    clock.t = 1060.5
    assert await refused_rows() == 2
    clock.t = math.nextafter(1060.5, math.inf)
    assert await refused_rows() == 3
