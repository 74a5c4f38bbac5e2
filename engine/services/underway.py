"""An allowed fetch or file call under way, and what `Engine.close` logs for it.

`Calls._carry_out` runs such a call in a task of its own, which writes the
call's row when the effect ends (SPEC §8: nothing a card was allowed to do
goes unlogged). `Engine.aclose` waits for those tasks. The synchronous
`Engine.close` cannot run the loop (it may be called from a coroutine on the
loop's thread, or with no loop running), so it settles each call still under
way itself (`Underway.at_close`), and its row goes in close's last commit:

- file work runs in a pool thread and needs no loop: close waits for it (all
  of it together at most `CLOSE_WAIT` seconds) and logs its real outcome —
  ``ok`` with its value, or the refusal its error means;
- a fetch needs the loop, which cannot run: it is abandoned (its task
  cancelled, which closes the request when the loop next runs) and logged
  ``cancelled`` as SPEC §8.1 logs a fetch abandoned in flight, with
  ``FETCH_FAILED`` (the request could not be completed), reason ``closed``;
- file work still running at the bound cannot be stopped (a thread's write
  cannot be): it is logged ``cancelled``, ``STORE_FAILED`` with reason
  ``closed`` (as `EngineClosed` says), its message saying the work may yet
  be done; work not yet begun is cancelled in the pool, and its message says
  so. An ``fs.watch`` is abandoned as a fetch is (its watch would begin on
  the loop).

The call's task, resumed or cancelled later, then writes nothing: it answers
its caller with the decision close logged (`Underway.closed`).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from engine.core.checks import Passed, denial
from engine.core.decision import Decision
from engine.effects.threadwork import ThreadWork

__all__ = ["CLOSE_WAIT", "Underway", "close_deadline"]

#: The longest `Engine.close` waits for file work under way, all of it together (seconds).
CLOSE_WAIT = 5.0


def close_deadline() -> float:
    """When close stops waiting for file work that begins to wait now (`time.monotonic`)."""
    return time.monotonic() + CLOSE_WAIT


class Underway:
    """One allowed fetch or file call carried out in a task of its own.

    Args:
        passed: what passed the checks (card, package, permission).
        decision: the call's ``ok`` decision, before its value.
        payload: its row's payload.
        t: when it was allowed: the time it counts at in its rate window once it has
            ended, and holds its place there meanwhile (`Calls._window_full`).
    """

    __slots__ = ("closed", "decision", "passed", "payload", "t", "task", "work")

    def __init__(self, passed: Passed, decision: Decision, payload: str | None,
                 t: float) -> None:
        self.passed, self.decision, self.payload, self.t = passed, decision, payload, t
        #: The task carrying it out (set once created).
        self.task: asyncio.Task[Decision] | None = None
        #: Its file work in a pool thread, once submitted (`ran`).
        self.work: ThreadWork | None = None
        #: The decision `Engine.close` logged for it: its task then writes nothing.
        self.closed: Decision | None = None

    def ran(self, work: ThreadWork) -> None:
        """Its file work was submitted to a pool thread (`engine.effects.threadwork.STARTED`)."""
        self.work = work

    def at_close(self, deadline: float) -> tuple[Decision, str | None]:
        """What close logs for it, waiting for its file work until ``deadline``
        (`time.monotonic`): the decision and its row's outcome (None: a refusal,
        logged as refusals found while performing are)."""
        work = self.work
        if work is not None and work.wait(deadline - time.monotonic()):
            try:
                value: Any = work.answer()
            except BaseException:
                # Neither a value nor a refusal (a bug of the job): not known to have
                # been done, nor not to have been.
                return self._abandoned("the file work failed as the engine closed"), "cancelled"
            if isinstance(value, Decision):
                # A call abandoned before it began (its consent went) is ``cancelled``,
                # as its own task logs it; another refusal is logged as refusals are.
                logged = value.extra.get("logged")
                return value, logged if isinstance(logged, str) else None
            return self.decision.with_(value=value), "ok"
        if work is None:
            if self.passed.spec.name == "net.fetch":
                return self._abandoned("the engine closed while the fetch was in flight",
                                       code="FETCH_FAILED"), "cancelled"
            return self._abandoned("the engine closed before the call was carried out"), "cancelled"
        if work.future.cancel():
            return self._abandoned("the engine closed before the file work began"), "cancelled"
        return self._abandoned(f"the engine closed while the file work was still running "
                               f"after {CLOSE_WAIT:g} s: it may yet be done"), "cancelled"

    def abandon(self, closed: Decision) -> None:
        """Logged at close as ``closed``: its task, if it can still run, is cancelled
        (a fetch's request closed) and answers that decision."""
        self.closed = closed
        task = self.task
        if task is not None and not task.done() and not task.get_loop().is_closed():
            task.cancel()

    def _abandoned(self, why: str, *, code: str = "STORE_FAILED") -> Decision:
        passed = self.passed
        return denial(passed.spec.name, passed.card.id, code, package=passed.package.name,
                      target=self.decision.target, permission=passed.permission,
                      reason="closed", arrow=self.decision.arrow, why=why)
