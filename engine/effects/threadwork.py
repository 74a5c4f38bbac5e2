"""File work in a pool thread, which closing the engine can wait for without the loop.

`Engine.close` may be called with no loop running, or from a coroutine on the
loop's thread (so it cannot run the loop): a fetch under way cannot end then,
but file work runs in a pool thread and can. `submit` hands a job to the pool
and tells the engine (`STARTED`, set by the engine around one file call) its
`ThreadWork`: the thread's future and how the job's outcome becomes the
call's answer — read the same way whether the call's task or the engine's
close reads it.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

__all__ = ["STARTED", "ThreadWork", "submit"]


class ThreadWork:
    """One job in a pool thread, and how its outcome becomes the call's answer.

    Args:
        future: the job's future in the pool.
        answer: reads an ended job's future: its value, or the refusal its error means.
    """

    __slots__ = ("_answer", "future")

    def __init__(self, future: concurrent.futures.Future[Any],
                 answer: Callable[[concurrent.futures.Future[Any]], Any]) -> None:
        self.future = future
        self._answer = answer

    def wait(self, timeout: float) -> bool:
        """Block until the job has ended, at most ``timeout`` seconds; True if it has."""
        concurrent.futures.wait((self.future,), timeout=max(timeout, 0.0))
        return self.future.done()

    def answer(self) -> Any:
        """The call's answer from the ended job (raises what the answer does not take)."""
        return self._answer(self.future)


#: Told the `ThreadWork` of the file call running in this context (the engine's
#: effect task sets it for its own call alone: a task's context is its own copy).
STARTED: ContextVar[Callable[[ThreadWork], None] | None] = ContextVar(
    "arrowgate_thread_work", default=None)


def submit(pool: concurrent.futures.Executor, job: Callable[[], Any],
           answer: Callable[[concurrent.futures.Future[Any]], Any], *,
           effect: bool = True) -> ThreadWork:
    """Run ``job`` in ``pool``; tell `STARTED` of it when its end is the call's ``effect``.

    A job whose end is not (an ``fs.watch``'s check: the watch itself begins on
    the loop) is not told: closing the engine cannot finish that call.
    """
    work = ThreadWork(pool.submit(job), answer)
    if effect:
        started = STARTED.get()
        if started is not None:
            started(work)
    return work
