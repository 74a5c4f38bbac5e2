"""Rate windows bind whatever the clock says (SPEC §6): a reading beyond the year 9999 is
no time, and the engine's time stands still at its floor, as for NaN or infinity.

Rule: the engine hands out only times in (−T, T], T the last second of the year 9999
(UTC). Beyond it a float's step outgrows the windows (at 1.7e18, a clock counting
nanoseconds, it is 256 s), so ``x + P == x``: a call counted there left its window
at once, no window ever held a call, and the time, once handed out, was kept by the
store and pinned every restart there.

Found in round 19: a clock stepped to 1.7e18 let a card copy to the clipboard
(1 a second) as often as it liked, forever.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock
from engine.core.limits import SteadyClock
from tests.conftest import manifest, offer_install

#: A clock counting nanoseconds, read as seconds.
NANOSECONDS = 1.7e18


async def _card(engine: Any, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.c", {"clipboard.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.c"}, workspace="w1")


async def test_a_clock_far_beyond_any_date_keeps_the_windows_binding(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """At 1.7e18 the clipboard still takes one call a second; the time stands at 1000."""
    engine = make_engine()
    await _card(engine, tmp_path)
    clock.t = NANOSECONDS
    codes = [(await engine.call("c1", "clipboard.copyText", None, {"text": "x"})).code
             for _ in range(3)]
    assert codes == [None, "RATE_LIMITED", "RATE_LIMITED"]
    assert engine.now() == 1000.0
    # Nothing was stamped beyond the year 9999: a restart is not pinned there, and
    # the clock set right goes on from where the engine's time stood.
    engine.close()
    clock.t = 1001.0
    again = make_engine()
    assert again.now() == 1001.0
    assert (await again.call("c1", "clipboard.copyText", None, {"text": "x"})).allowed
    assert all(row["t"] <= 1001.0 for row in again.log_rows())


def test_the_steady_clock_takes_no_reading_or_floor_beyond_the_year_9999() -> None:
    """Readings and floors beyond ±T are ignored; T itself is a time."""
    latest = 253402300799.0  # 9999-12-31T23:59:59Z
    t = [NANOSECONDS]
    steady = SteadyClock(lambda: t[0])
    assert steady() == 0.0  # no time yet: 0.0, as for NaN
    for reading in (-NANOSECONDS, latest * 2, math.nextafter(latest, math.inf)):
        t[0] = reading
        assert steady() == 0.0
    steady.at_least(NANOSECONDS)
    assert steady() == 0.0
    t[0] = latest
    assert steady() == latest
