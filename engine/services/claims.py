"""Terminal claims: when the claim of the engine that drives a terminal has lapsed.

An engine that drives a terminal claims it in the store before its driver
starts (`Engine.attach_driver`); input through any other engine is refused while
the claim stands (`Calls`), and an attach elsewhere is refused beside it. A
claim ends with its engine's close, with its node, and when it lapses: its
process is gone from this machine (the same boot and pid namespace, where a pid
names one process: `engine.effects.processes`), or — a claim whose process
cannot be judged here (made on another machine, container or boot) — its lease
ran out by the store's clock.

The lease is `LEASE_S`, renewed every `RENEW_EVERY_S` by the driving engine
(in the background, never on a call's path). Thirty seconds: long enough that
an engine whose loop or store stalls for a few renewals (a long commit, a
PostgreSQL failover, a paused laptop waking) keeps its terminal, short enough
that when a machine dies its terminals are free again within half a minute, with
no manual step: an attach, or the next input, finds the lease run out. The
store's clock judges it (PostgreSQL's ``now()``; the machine's on SQLite, one
machine), so the machines' clocks need not agree.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Mapping

from engine.core.errors import EngineClosed, StoreFailed
from engine.effects import processes
from engine.effects.drivers import Driver, TerminalDriver
from engine.store.base import TerminalClaim

__all__ = ["LEASE_S", "RENEW_EVERY_S", "Renewal", "lapsed"]

#: Renewals that fail, and drivers stopped as their claim was taken.
_log = logging.getLogger("arrowgate.claims")

#: How long a claim stands after its last renewal, by the store's clock (seconds).
LEASE_S = 30.0
#: How often the driving engine renews its claims (seconds): six renewals a lease,
#: so a few missed ones do not let it lapse.
RENEW_EVERY_S = 5.0


def lapsed(claim: TerminalClaim) -> bool:
    """Whether no process drives the terminal by ``claim`` any more: its process is
    gone from this machine, or, when its process cannot be judged here, its lease
    ran out (`TerminalClaim.expired`). A live process's claim never lapses here,
    whatever its lease: the process check is exact where it can be made."""
    if processes.judged(claim.process):
        return processes.gone(claim.process)
    return claim.expired


class Renewal:
    """An engine's renewal of its terminal claims' leases, every `RENEW_EVERY_S` once
    it claimed one: a timer on the loop, each round a task of its own.

    No task waits between rounds, so a close between turns of the loop (a loop
    that runs no more) leaves none pending; a loop that ended took its timer with
    it, and a claim made on another loop starts the renewal there. A round that
    raises is logged and the next is still due: the leases must not run out
    under live drivers.

    It fails closed: each terminal's lease is known to run at least until
    `LEASE_S` after the start of the last write that renewed it (the store's
    clock reads its time during that write, after it began). A driver whose
    lease was not renewed by then — the store refused the renewals, or does not
    answer at all — is stopped just before, whatever the rounds do: once it ran
    out, another engine may take the terminal over, and two drivers would type
    into it. A driver still starting then never finishes: it is cancelled
    (`World.cancel_start`), so it never becomes the terminal's driver, and its
    attach is refused once its start returns (`cut_short`).

    Args:
        renew: one round's write (the store's `renew_terminals` inside an
            operation): the terminals whose claims are still this engine's.
        drivers: the engine's drivers by node, now.
        detach: stops a driver (`World.detach`).
        closed: whether the engine closed.
        say: writes a line on a terminal's output (`World.output`).
        cancel_start: cancels the driver starting for a node, returning it
            (`World.cancel_start`).
    """

    def __init__(self, renew: Callable[[], Awaitable[set[str]]],
                 drivers: Callable[[], Mapping[str, Driver]],
                 detach: Callable[[Driver], Awaitable[None]],
                 closed: Callable[[], bool],
                 say: Callable[[str, str], None],
                 cancel_start: Callable[[str], Driver | None]) -> None:
        self._renew, self._drivers, self._detach, self._closed = renew, drivers, detach, closed
        self._say, self._cancel_start = say, cancel_start
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The timer of the next round, and the round under way.
        self._next: asyncio.TimerHandle | None = None
        self._round: asyncio.Task[None] | None = None
        #: Whether the last round could not reach the store (said once, not every round).
        self._failing = False
        #: Until when (the loop's clock) each claimed terminal's lease surely runs.
        self._until: dict[str, float] = {}
        #: The timer that stops the drivers whose leases were not renewed in time.
        self._guard: asyncio.TimerHandle | None = None
        #: Drivers being stopped by the guard (kept until they stopped).
        self._stopping: set[asyncio.Task[None]] = set()
        #: Drivers the guard cancelled while they started, until their attach asks.
        self._cut: set[Driver] = set()

    def claimed(self, node: str, began: float) -> None:
        """``node``'s claim was written by a write that began at ``began`` (the running
        loop's clock): its lease runs at least `LEASE_S` from then."""
        self._until[node] = began + LEASE_S
        self._arm(asyncio.get_running_loop())

    def cut_short(self, driver: Driver) -> bool:
        """Whether the guard cancelled ``driver`` while it started (its lease was
        running out unrenewed); asked once, by its attach, which then refuses."""
        if driver in self._cut:
            self._cut.discard(driver)
            return True
        return False

    def start(self) -> None:
        """Renew from now on, on the running loop (again only if it is another loop)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._later(loop)

    def stop(self) -> None:
        """At close: no round is due any more, and one under way is cancelled."""
        if self._next is not None:
            self._next.cancel()
        if self._guard is not None:
            self._guard.cancel()
        task = self._round
        if task is not None and not task.done() and not task.get_loop().is_closed():
            task.cancel()

    def _later(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._closed() and not loop.is_closed():
            self._next = loop.call_later(RENEW_EVERY_S, self._now, loop)

    def _now(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._closed():
            return
        # A fresh context: its writes must not join the batch of whatever runs now.
        task = loop.create_task(self._once(), context=contextvars.Context())
        self._round = task
        task.add_done_callback(lambda done: self._ended(done, loop))

    def _ended(self, task: asyncio.Task[None], loop: asyncio.AbstractEventLoop) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            _log.error("arrowgate: a renewal of the terminal claims failed", exc_info=exc)
        self._later(loop)

    async def _once(self) -> None:
        """One round: renew the leases; a round the store fails is retried at the next
        (the lease outlasts several, and the guard stops the drivers before it ends).
        A driver whose terminal another engine claims now (its lease ran out
        unrenewed, and it was taken over) is stopped: it would type where input
        through other engines is not refused."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            held = await self._renew()
        except EngineClosed:
            return
        except StoreFailed as exc:
            if not self._failing:
                _log.warning("arrowgate: cannot renew the terminal claims, retrying: %s", exc)
            self._failing = True
            return
        self._failing = False
        # A claim written after this round began, and not renewed by it, keeps its own.
        self._until = {node: until for node, until in self._until.items()
                       if node not in held and until > began + LEASE_S}
        self._until.update((node, began + LEASE_S) for node in held)
        self._arm(loop)
        for node_id, driver in list(self._drivers().items()):
            if isinstance(driver, TerminalDriver) and node_id not in held:
                _log.warning("arrowgate: terminal %s is claimed by another engine now; "
                             "its driver here stops", node_id)
                await self._stop(node_id, driver, "[this terminal is claimed by another"
                                 " engine now: its driver here stopped]\n")

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        """Set the guard for the earliest lease's end (a little before it: stopping
        takes a moment, and the clocks may drift apart by as much)."""
        if self._guard is not None:
            self._guard.cancel()
            self._guard = None
        if self._until and not self._closed() and not loop.is_closed():
            when = min(self._until.values()) - _ahead()
            self._guard = loop.call_at(when, self._lapse, loop)

    def _lapse(self, loop: asyncio.AbstractEventLoop) -> None:
        """The guard: stop at once every driver whose lease may end before it is renewed."""
        if self._closed():
            return
        end = loop.time() + _ahead()
        drivers = self._drivers()
        for node_id, until in list(self._until.items()):
            if until > end:
                continue
            del self._until[node_id]
            driver = drivers.get(node_id)
            starting = self._cancel_start(node_id)
            if starting is not None:
                # Not yet typing: it never will (its attach stops it and refuses).
                _log.warning("arrowgate: the claim on terminal %s could not be renewed"
                             " before its lease ran out; its driver, still starting,"
                             " is cancelled", node_id)
                self._cut.add(starting)
                self._say(node_id, "[this engine could not renew its claim on this"
                          " terminal before its lease ran out: its driver, still"
                          " starting, was cancelled]\n")
            if isinstance(driver, TerminalDriver):
                _log.warning("arrowgate: the claim on terminal %s could not be renewed"
                             " before its lease ran out; its driver here stops", node_id)
                task = loop.create_task(self._stop(
                    node_id, driver, "[this engine could not renew its claim on this"
                    " terminal before its lease ran out: its driver here stopped]\n"),
                    context=contextvars.Context())
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)
        self._arm(loop)

    async def _stop(self, node_id: str, driver: Driver, why: str) -> None:
        """Stop ``driver`` of terminal ``node_id`` and say why on its output."""
        try:
            await self._detach(driver)
        except Exception:  # noqa: BLE001 - the app's driver: isolated
            # Its error must not end the round: the other terminals' drivers
            # whose claims were taken would go on typing.
            _log.exception("arrowgate: the driver of %s failed to stop", node_id)
        self._say(node_id, why)


def _ahead() -> float:
    """How long before a lease's end its driver is stopped: a thirtieth of the lease
    (one second of thirty), time for the stop and for the clocks' drift."""
    return LEASE_S / 30
