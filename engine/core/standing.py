"""Timeouts and rates counted on the clock while the engine's time stands still (SPEC §6).

When the clock is behind the engine's time (stepped back, or a time far ahead
written to a shared store by another engine or by hand), the engine's time stands
still until the clock catches up: every rate window stays as full as it was, which
fails closed. But a deadline on that time — a hold's (SPEC §7), a tool call's
(SPEC §9) — would then never come, for years after a far-future time, and silence
is never consent. So each such wait also ends once the clock has run what its
deadline left of the engine's time when this engine began it or first saw it while
time stood (a restart, another engine's, a step back): the whole timeout on the clock
at the latest, and the seconds a wait had waited before a step back count. Nothing
is counted while the clock leads: deadlines move with it then.

What goes at a rate on the engine's time would stop likewise: a workspace's prompt
budget frees no unit while that time stands, so queued prompts would wait for the
clock to catch up (hours after a clock stepped back). `RunSince` counts how long
the clock has run forward since the budget's bucket stood as it is, and the bucket
leaks for that long at the least.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.core.limits import SteadyClock

__all__ = ["ClockRun", "RunSince"]


class ClockRun:
    """How long the clock has run for each open wait while the engine's time stands.

    A wait may run on the clock, from when this engine began it or first saw it while
    time stood (a restart, another engine's, a step back), for what its deadline left
    of the engine's time then — the time standing still, that is what is left now: its
    whole timeout for one begun while time stands, the rest of it for one begun while
    the clock led, so the seconds it had waited before the step back count. Only
    forward runs of the clock count, so a further step back gives no wait more time.
    """

    def __init__(self) -> None:
        #: Each wait counted: the clock's reading at its last look, and the seconds the
        #: clock has run forward since it was begun or first seen while time stood.
        self._marks: dict[str, tuple[float, float]] = {}

    def begun(self, key: str, clock: SteadyClock) -> None:
        """The wait ``key`` begins now: while time stands, counted from this reading."""
        if clock.behind() > 0.0:
            reading = clock.reading()
            if reading is not None:
                self._marks[key] = (reading, 0.0)

    @staticmethod
    def _allowed(timeout: float, deadline: float, clock: SteadyClock) -> float:
        """Seconds of the clock a wait may run while time stands: what its ``deadline``
        leaves of the engine's time (which does not move meanwhile), never more than
        its ``timeout``."""
        return min(timeout, deadline - clock.high)

    def late(self, waits: Iterable[tuple[str, float, float]], clock: SteadyClock) -> list[str]:
        """The keys of ``waits`` — every open wait, as (key, timeout in seconds, deadline
        on the engine's time) — whose time the clock has run while time stood still
        (`_allowed`); [] while the clock leads.

        Forgets waits no longer given, and starts counting those not seen before.
        """
        marks = self._marks
        reading = clock.reading()  # read once a look: `behind` would read it again
        if reading is None or reading >= clock.high:  # the clock leads
            marks.clear()
            return []
        open_now = list(waits)
        if len(marks) > len(open_now):
            kept = {key for key, _, _ in open_now}
            for key in [key for key in marks if key not in kept]:
                del marks[key]
        late = []
        for key, timeout, deadline in open_now:
            mark = marks.get(key)
            if mark is None:  # first seen while time stands: counted from now
                run = 0.0
            else:  # a step back (a reading below the last) counts nothing
                last, run = mark
                run += max(0.0, reading - last)
            marks[key] = (reading, run)
            if run >= self._allowed(timeout, deadline, clock):
                late.append(key)
        return late

    def left(self, key: str, timeout: float, deadline: float,
             clock: SteadyClock) -> float | None:
        """Seconds of the clock left for the wait ``key`` while time stands still (all
        it may run, `_allowed`, for a wait not counted yet: it is, from the next look);
        None while the clock leads, when nothing is counted."""
        reading = clock.reading()
        if reading is None or reading >= clock.high:
            return None
        mark = self._marks.get(key)
        run = 0.0 if mark is None else mark[1] + max(0.0, reading - mark[0])
        return self._allowed(timeout, deadline, clock) - run

    def remaining(self, key: str, timeout: float, deadline: float, clock: SteadyClock) -> float:
        """Seconds of the clock before the wait ``key`` (its ``timeout``, its ``deadline``
        on the engine's time) ends, never below 0: until the deadline while the clock
        leads; while time stands still, until the clock reaches the deadline or has run
        what the wait may (`late`), whichever comes first."""
        on_clock = self.left(key, timeout, deadline, clock)
        reading = clock.reading()
        if on_clock is None or reading is None:
            return max(0.0, deadline - clock())
        return max(0.0, min(deadline - reading, on_clock))

    def ends_at(self, key: str, timeout: float, deadline: float, clock: SteadyClock) -> float:
        """When the wait ``key`` ends, as a reading of the clock — what a deadline shown to
        a person or a program says: the deadline itself while the clock leads (the
        engine's time is the clock's then); while time stands still, the clock's reading
        now plus `remaining`, not a time the engine's clock will not reach for so long."""
        reading = clock.reading()
        if reading is None or reading >= clock.high:
            return deadline
        return reading + self.remaining(key, timeout, deadline, clock)


class RunSince:
    """How long the clock has run forward since a stored value was left as it stands, per
    key, while the engine's time stands still ahead of the clock (SPEC §6).

    For what the store keeps on the engine's time and must go on changing at its rate
    meanwhile: a workspace's prompt budget leaks for this long at the least
    (`engine.core.budget.leak`), so queued prompts go at the budget's rate instead of
    waiting for the clock to catch up. Only forward runs count: a step back counts
    nothing, and the run goes on from the reading after it, so it is how long the clock
    ran as far as this engine looked (every look of a workspace's wait for budget). A
    value changed by anyone else (another engine's delivery) starts the count afresh,
    so no second another engine's time counts is counted here too.
    """

    __slots__ = ("marks",)

    def __init__(self) -> None:
        #: Each key counted: its value as last left or seen, the clock's reading at the
        #: last look and the seconds it has run forward since the value stood so.
        self.marks: dict[str, tuple[object, float, float]] = {}

    def ran(self, key: str, value: object, clock: SteadyClock) -> float:
        """Seconds the clock has run forward since ``key`` stood at ``value`` (0.0 for a
        value not seen so before, which is counted from now; and while the clock
        leads, when nothing is counted: the engine's time moves with it then)."""
        reading = clock.reading()
        if reading is None or reading >= clock.high:  # the clock leads (or is no time)
            self.marks.clear()
            return 0.0
        mark = self.marks.get(key)
        if mark is None or mark[0] != value:
            self.marks[key] = (value, reading, 0.0)
            return 0.0
        return self._look(key, mark, reading)

    def look(self, key: str, clock: SteadyClock) -> float | None:
        """The run counted for ``key`` so far, brought to the clock's reading now (None:
        nothing counted for it)."""
        mark = self.marks.get(key)
        if mark is None:
            return None
        reading = clock.reading()
        return mark[2] if reading is None else self._look(key, mark, reading)

    def left(self, key: str, value: object, clock: SteadyClock) -> None:
        """``key`` was left at ``value`` now: counted from this reading, if counted at all."""
        if key in self.marks:
            reading = clock.reading()
            if reading is None:
                del self.marks[key]
            else:
                self.marks[key] = (value, reading, 0.0)

    def _look(self, key: str, mark: tuple[object, float, float], reading: float) -> float:
        value, last, run = mark
        if reading > last:
            run += reading - last
        self.marks[key] = (value, reading, run)
        return run
