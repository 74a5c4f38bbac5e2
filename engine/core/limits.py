"""Rolling-window rate limits (SPEC §6): exact sliding logs, not leaky buckets.

A call at time t is allowed when fewer than N counted calls of its key lie in
the half-open window (t − P, t]; otherwise it is refused with
``retry_after = oldest + P − t``. Only calls that passed every earlier check
are counted, by the caller calling `count`.
"""

from __future__ import annotations

import math
from bisect import insort
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.core.catalogue import RATE_LIMITS, RateLimit
from engine.core.text import SHOWN

if TYPE_CHECKING:
    from canvas.graph import Canvas

__all__ = ["CALLS_NAMED", "DENIAL_PERIOD", "LATEST", "UNDER_WAY_PER_CARD", "DenialLog", "Handover",
           "RateCounters", "RollingWindow", "SteadyClock", "Suppressed", "hand_over",
           "rate_owner"]

#: The last second of the year 9999 (UTC): the latest time the engine hands out, and
#: minus it the earliest. Beyond it a float's step outgrows the windows (at 1.7e18,
#: a clock counting nanoseconds, it is 256 s): ``x + P`` is ``x``, a counted call
#: leaves its window at once, and no rate limit would bind. A global, not an
#: attribute read, where every call reads the clock.
LATEST = 253402300799.0
_LATEST = LATEST
#: ``high`` before any time was handed out: below every time the engine takes.
_NONE_YET = -LATEST


class SteadyClock:
    """The engine's time (SPEC §6): the injected clock, but never going backwards.

    When the clock is stepped back, time stands still at the highest value
    seen until the clock catches up, so no rolling window can be reopened by
    setting a clock back. A value that is not a time (NaN, ±inf, or beyond
    ±`LATEST`, where no window can be kept) is ignored the same way.
    `at_least` raises the floor: the engine calls it with the newest time in
    the store when it opens, so a restart with an earlier clock stands still too,
    and whenever it catches up with (or, on PostgreSQL, looks at) the store, so an
    engine whose clock is behind another's on one store stands still likewise.
    `past` steps just beyond a standing time, for what must come strictly after
    all before it (a node made again under a used id). `behind` says how long the
    clock must run before time moves again.
    """

    __slots__ = ("clock", "high")

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        #: The highest time handed out so far (or read from the store);
        #: `_NONE_YET` before any.
        self.high = _NONE_YET

    def __call__(self) -> float:
        t = self.clock()
        if type(t) is float and self.high < t <= _LATEST:
            # Most readings (every call reads it): a float ahead of the floor.
            self.high = t = t + 0.0  # (-0.0: see below)
            return t
        # `+ 0.0` turns -0.0 into 0.0 and leaves every other value as it is:
        # SQLite stores -0.0 as 0, so a log row made at -0.0 would be hashed
        # with a time it is not stored with, and would never verify.
        t = float(t) + 0.0
        if self.high < t <= _LATEST:  # False for NaN too
            self.high = t
        if self.high == _NONE_YET:
            # No time seen yet: 0.0 is handed out, so it is the floor now (a
            # later clock of -1 would otherwise go back from it).
            self.high = 0.0
        return self.high

    def standing(self) -> bool:
        """Whether time stands still: the clock reads no later than the time last
        handed out (stepped back, not yet ticked, or no time)."""
        t = self.clock()
        try:
            ahead = self.high < float(t) <= _LATEST  # False for NaN too
        except (TypeError, ValueError):
            ahead = False
        return not ahead

    def behind(self) -> float:
        """How many seconds the clock must still run before the engine's time moves
        again: how far the time it stands still at is ahead of the clock's reading
        (0.0 while the clock leads, and for a reading that is no time, which says
        nothing of how far).

        What a refusal or a countdown tells in seconds of the clock a caller has
        (SPEC §6: time stands still until the clock catches up).
        """
        t = self.reading()
        return 0.0 if t is None else max(0.0, self.high - t)

    def reading(self) -> float | None:
        """The clock's own reading, where it may be behind the engine's time; None
        when it is no time (NaN, ±inf, beyond ±`LATEST`, not a number)."""
        t = self.clock()
        try:
            t = float(t)
        except (TypeError, ValueError):
            return None
        return t + 0.0 if -_LATEST <= t <= _LATEST else None  # NaN fails this too

    def past(self) -> float:
        """A time strictly after every time handed out so far (or read from the
        store), handed out and kept as the floor: the clock's own reading when it
        is ahead, else the next float above the standing time (SPEC §6).

        For what must come after all before it, as the making of a node under
        an id that had a past does (`engine.service.made.Made` bounds what the
        node reads by that time): time standing still would otherwise stamp the
        earlier node's rows and the new node's making alike.
        """
        before = self.high
        t = self()
        if t <= before and before < _LATEST:
            self.high = t = math.nextafter(before, math.inf)
        return t

    def at_least(self, t: float | None) -> None:
        """Never hand out a time earlier than ``t`` (ignored unless a time, as readings are)."""
        if t is not None and self.high < t <= _LATEST:
            self.high = t


def rate_owner(canvas: Canvas, card: str) -> str:
    """Whose rate windows a card's calls count in: the root of its spawn tree (SPEC §6).

    A card spawned as a copy of itself (``canvas.spawn`` kind ``self``)
    carries ``spawned_by``; copies of copies lead back to the first card, so
    spawning never multiplies a card's limits. Removing a root hands its
    windows to a copy that becomes the root (`CanvasOps.remove_node`), so no
    node names a removed spawner; should one still (a store written before
    that rule), the walk ends with the missing parent's id.
    """
    node = canvas.node(card)
    if node is None or type(node.data.get("spawned_by")) is not str:
        # Almost every card is no copy: no walk, and no set to build for it.
        return card
    seen = {card}
    while node is not None and node.type == "card":
        parent = node.data.get("spawned_by")
        if not isinstance(parent, str) or parent in seen:
            break
        seen.add(parent)
        card = parent
        node = canvas.node(parent)
    return card


@dataclass(frozen=True, slots=True)
class Handover:
    """What a removed node leaves to the nodes it spawned (`hand_over`)."""

    #: (node id, its spawner now; None: spawned by no one), for every node that
    #: named the removed one as its spawner.
    spawners: tuple[tuple[str, str | None], ...]
    #: The removed node was its tree's root: its windows go to ``heir``.
    root: bool
    #: The copy that is the root now and takes the windows (None, for a root:
    #: the tree ended, its windows are forgotten).
    heir: str | None


def hand_over(removed: str, owner: str, spawned: Iterable[tuple[str, str]]) -> Handover:
    """Keep a spawn tree whole without the removed node ``removed`` (SPEC §6 leaves it open).

    Rule: no node may go on naming a removed id as its spawner, since a new node
    given that id would otherwise take over the tree's windows and live-spawn
    count. What a copy spawned hangs from the tree's root ``owner``; when the
    root itself goes, its first live copy (in id order) becomes the root and
    takes the windows; with no copy left the tree ends, its spawned notes count
    for no one and its windows are forgotten. Applied at removal
    (`CanvasOps.remove_node`) and, once, to stores older code left with a
    removed root's id still named (the store migrations ``m015``).

    Args:
        removed: the removed node's id.
        owner: the root of its spawn tree (`rate_owner`; itself for a root).
        spawned: (id, type) of every node naming ``removed`` as its spawner.
    """
    ordered = sorted(spawned)
    if owner != removed:
        return Handover(tuple((node, owner) for node, _type in ordered), False, None)
    copies = [node for node, kind in ordered if kind == "card"]
    if not copies:
        return Handover(tuple((node, None) for node, _type in ordered), True, None)
    heir = copies[0]
    rest = tuple((node, heir) for node, _type in ordered if node != heir)
    return Handover(((heir, None), *rest), True, heir)


def _beyond(x: float, period: float, t: float) -> float:
    """``x + period − t``: above 0 exactly when a call at ``x`` still lies in (t − P, t].

    Its sign is exact, as SPEC §6 reads the window ("precisely"). ``x + P`` in
    floats is rounded where it crosses a power of two; rounded onto ``t`` it made a
    call 60 − 2⁻⁴³ s old look gone. Rounding is monotonic and ``t`` is a float, so
    only a sum equal to ``t`` is in doubt, and its rounding error (TwoSum, exact)
    then says which side it was on: that error is the answer.
    """
    s = x + period
    if s != t:
        return s - t
    back = s - x
    return (x - (s - back)) + (period - back)


class RollingWindow:
    """The accepted call times of one (card, key), oldest first (in time, whatever
    order they were counted in)."""

    __slots__ = ("limit", "period", "times")

    def __init__(self, limit: int, period: float) -> None:
        self.limit = limit
        self.period = period
        self.times: deque[float] = deque()

    def _drop_old(self, t: float) -> None:
        # Times at or before t − P have left the half-open window (t − P, t].
        # A sum above t is no doubt (the usual answer, at one addition); one
        # at or below it is settled by `_beyond`, as retry_after is, so a
        # refused call always gets a positive retry_after.
        times, period = self.times, self.period
        while times and times[0] + period <= t and _beyond(times[0], period, t) <= 0:
            times.popleft()

    def retry_after(self, t: float, limit: int | None = None) -> float | None:
        """None when a call at ``t`` fits, else the seconds until one would.

        ``limit``: the window's count when a workspace setting gives it (None: its own).
        Pure: asking about any time changes nothing (pruning happens in
        `count`, which keeps the times of the last period here).
        """
        if limit is None:
            limit = self.limit
        if len(self.times) < limit:
            # Fewer calls than the limit at all, so fewer inside the window:
            # the usual answer, without looking at their times.
            return None
        # Times after t count too: the engine's time never goes back, but
        # another process on the same store may run a clock behind ours.
        # Inline for the usual sums, clear of t; `_beyond` for one equal to it.
        period = self.period
        inside = [x for x in self.times
                  if t < x + period or (x + period == t and _beyond(x, period, t) > 0)]
        if len(inside) < limit:
            return None
        # The next call fits once the limit-th newest call inside has left.
        return _beyond(inside[len(inside) - limit], period, t)

    def count(self, t: float) -> None:
        """Record an accepted call at ``t``, the times kept in time order.

        One engine's times never decrease, but a call another engine stamped a little
        before one of ours may be committed, and read, after it (and a store read at a
        restart is in the order of commits): `retry_after` reads the oldest first.
        """
        self._drop_old(t)
        times = self.times
        if times and t < times[-1]:
            insort(times, t)
        else:
            times.append(t)


class RateCounters:
    """Every card's rolling windows, by rate key."""

    def __init__(self, limits: dict[str, RateLimit] | None = None) -> None:
        self.limits = limits if limits is not None else RATE_LIMITS
        self._windows: dict[tuple[str, str], RollingWindow] = {}

    def _window(self, card: str, key: str) -> RollingWindow:
        window = self._windows.get((card, key))
        if window is None:
            spec = self.limits[key]
            window = self._windows[(card, key)] = RollingWindow(spec.limit, spec.period)
        return window

    def retry_after(self, card: str, key: str, t: float, limit: int | None = None
                    ) -> float | None:
        """None when ``card`` may make a call of ``key`` at ``t``, else seconds to wait
        (``limit``: the count of a window a workspace setting gives, `window_limit`)."""
        return self._window(card, key).retry_after(t, limit)

    def retry_after_beside(self, card: str, key: str, t: float, limit: int,
                           pending: Iterable[float]) -> float | None:
        """`retry_after` as if the calls allowed at the times ``pending`` and not yet
        counted (still under way: a fetch, file work) were counted already, so that calls
        in flight together never pass the window's ``limit``."""
        window = self._window(card, key)
        beside = RollingWindow(window.limit, window.period)
        beside.times = deque(sorted([*window.times, *pending]))
        return beside.retry_after(t, limit)

    def count(self, card: str, key: str, t: float) -> None:
        """Count an accepted call."""
        self._window(card, key).count(t)

    def load(self, rows: Iterable[tuple[str, str, float]]) -> None:
        """Restore counted calls (card, key, t), oldest first, after a restart."""
        for card, key, t in rows:
            if key in self.limits:
                self._window(card, key).count(t)

    def forget(self, card: str) -> None:
        """Drop a removed card's windows."""
        for key in [k for k in self._windows if k[0] == card]:
            del self._windows[key]

    def move(self, card: str, heir: str) -> None:
        """Hand ``card``'s windows to ``heir`` (a removed spawn root's to its new root)."""
        for key in [k for k in self._windows if k[0] == card]:
            window = self._windows.pop(key)
            own = self._windows.get((heir, key[1]))
            if own is not None:
                # A copy counts in its root's windows, so it has none of its
                # own; merged all the same, rather than lose a counted call.
                window.times = deque(sorted([*window.times, *own.times]))
            self._windows[(heir, key[1])] = window


#: The window of ``denial_log_limit`` (SPEC §8 "Bounds"), seconds.
DENIAL_PERIOD = 60.0


@dataclass(slots=True)
class Suppressed:
    """Refusals of one card (or of data one agent or terminal sent out on a port) answered
    but not logged row by row, since its last row: the pending summary the store keeps
    for its budget key until its ``suppressed`` row is written."""

    card: str | None
    package: str | None
    workspace: str | None
    first: float
    last: float
    count: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    #: The agent or terminal whose port deliveries were refused (their rows' target),
    #: when the budget is that sender's rather than a card's.
    target: str | None = None

    def add(self, t: float, code: str | None, call: str) -> None:
        """Count one more refusal at ``t``: the summary grows by no more than its counters."""
        self.count += 1
        if t > self.last:
            self.last = t
        if t < self.first:
            self.first = t
        self.codes[code or "none"] += 1
        # Call names are the card's to choose, of any length: name a few, each cut
        # as a log row cuts it, and count the rest.
        if len(call) > SHOWN:
            call = call[:SHOWN] + "…"
        calls = self.calls
        calls[call if call in calls or len(calls) < CALLS_NAMED else "…"] += 1

    def summary(self) -> dict[str, object]:
        """The payload of the ``suppressed`` row: count, codes, calls and time span."""
        return {"count": self.count, "codes": dict(sorted(self.codes.items())),
                "calls": dict(sorted(self.calls.items())), "first": self.first,
                "last": self.last}


#: How many call names a summary names; the rest are counted under "…".
CALLS_NAMED = 16


class DenialLog:
    """Which refusals get a row of their own: at most N per card in any 60 s (SPEC §8).

    Beyond that a card's refusals are still answered, but only counted toward
    a `Suppressed` summary (which the store keeps, so that a killed process
    loses none: `engine.services.record.Recorder`); the engine appends one
    ``suppressed`` row for them before that card's next row and at close.
    Refusals made in the name of no card on the canvas (an unknown id) share
    one budget, so making up ids gains nothing, and memory holds one entry per
    real card at most.
    """

    __slots__ = ("_times",)

    def __init__(self) -> None:
        self._times: dict[str | None, deque[float]] = {}

    def admit(self, key: str | None, t: float, limit: int) -> bool:
        """True when a refusal at ``t`` gets its own row (and counts); else it is suppressed."""
        times = self._times.get(key)
        if times is None:
            times = self._times[key] = deque()
        # As a rate window's (`RollingWindow._drop_old`): exact at the edge.
        while times and times[0] + DENIAL_PERIOD <= t and _beyond(times[0], DENIAL_PERIOD, t) <= 0:
            times.popleft()
        if len(times) >= limit:
            return False
        times.append(t)
        return True

    def keep(self, live: Callable[[str], bool]) -> None:
        """Drop the budgets of the keys ``live`` says are gone (removed cards, and agents
        and terminals whose port deliveries were refused); the shared budget of
        unknown cards (None) stays. Their pending summaries are not here: the store
        keeps those until their ``suppressed`` row is written."""
        for key in [k for k in self._times if k is not None and not live(k)]:
            del self._times[key]

#: The most allowed fetches one card has under way at once, and apart the most file
#: calls; one more is ``CARD_LIMIT``, reason ``under-way``. Each holds a task, its arguments and, for a
#: fetch, a connection (a file descriptor) until it ends: unbounded, one card's
#: fetches to a silent server it declared could use up the process's descriptors.
UNDER_WAY_PER_CARD = 32
