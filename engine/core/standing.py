"""Timeouts counted on the clock while the engine's time stands still (SPEC §6).

When the clock is behind the engine's time (stepped back, or a time far ahead
written to a shared store by another engine or by hand), the engine's time stands
still until the clock catches up: every rate window stays as full as it was, which
fails closed. But a deadline on that time — a hold's (SPEC §7), a tool call's
(SPEC §9) — would then never come, for years after a far-future time, and silence
is never consent. So each such wait also ends after its timeout *on the clock* at
the latest, counted from when this engine began it or first saw it while time stood
(a restart, another engine's), or from the clock's last step back meanwhile.
Nothing is counted while the clock leads: deadlines move with it then.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.core.limits import SteadyClock

__all__ = ["ClockRun"]


class ClockRun:
    """How long the clock has run for each open wait while the engine's time stands."""

    def __init__(self) -> None:
        #: Each wait's clock reading when it was begun or first seen while time stood.
        self._marks: dict[str, float] = {}

    def begun(self, key: str, clock: SteadyClock) -> None:
        """The wait ``key`` begins now: while time stands, counted from this reading."""
        if clock.behind() > 0.0:
            reading = clock.reading()
            if reading is not None:
                self._marks[key] = reading

    def late(self, waits: Iterable[tuple[str, float]], clock: SteadyClock) -> list[str]:
        """The keys of ``waits`` — every open wait, as (key, timeout in seconds) — whose
        timeout the clock has run while time stood still; [] while the clock leads.

        Forgets waits no longer given, and starts counting those not seen before.
        """
        marks = self._marks
        reading = clock.reading()  # read once a look: `behind` would read it again
        if reading is None or reading >= clock.high:  # the clock leads
            marks.clear()
            return []
        open_now = list(waits)
        if len(marks) > len(open_now):
            kept = {key for key, _ in open_now}
            for key in [key for key in marks if key not in kept]:
                del marks[key]
        late = []
        for key, timeout in open_now:
            mark = marks.get(key)
            if mark is None or reading < mark:  # first seen, or the clock stepped back
                marks[key] = mark = reading
            if reading - mark >= timeout:
                late.append(key)
        return late

    def left(self, key: str, timeout: float, clock: SteadyClock) -> float | None:
        """Seconds of the clock left of ``timeout`` for the wait ``key`` while time
        stands still; None when nothing is counted for it (the clock leads)."""
        mark = self._marks.get(key)
        reading = clock.reading()
        if mark is None or reading is None or clock.behind() <= 0.0:
            return None
        return timeout - (reading - mark)
