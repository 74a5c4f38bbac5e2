"""File work in a pool thread, which closing the engine can wait for without the loop.

`Engine.close` may be called with no loop running, or from a coroutine on the
loop's thread (so it cannot run the loop): a fetch under way cannot end then,
but file work runs in a pool thread and can. `submit` hands a job to the pool
and tells the engine (`STARTED`, set by the engine around one file call) its
`ThreadWork`: the thread's future and how the job's outcome becomes the
call's answer — read the same way whether the call's task or the engine's
close reads it.

The pool is a `DaemonPool`: its threads are never joined when the interpreter
exits, so work stuck in the kernel (a network file system that stopped
answering) cannot keep the process alive once the engine has closed.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import functools
import queue
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["STARTED", "DaemonPool", "ThreadSlots", "ThreadWork", "submit"]

_T = TypeVar("_T")


class DaemonPool(concurrent.futures.Executor):
    """At most ``workers`` daemon threads running the jobs submitted, in order.

    As `ThreadPoolExecutor`, but its threads are daemons that the interpreter
    does not join at exit: a job that never returns (a read of a network file
    system that stopped answering, a name lookup no server answers) must not
    keep the process alive once what waited for it has given up. A thread is
    started when a job finds none idle, up to ``workers``; idle ones wait for
    the next.

    Args:
        workers: the most threads.
        name: the threads' name.
    """

    def __init__(self, workers: int, name: str) -> None:
        self._workers, self._name = workers, name
        self._jobs: queue.SimpleQueue[tuple[concurrent.futures.Future[Any],
                                            Callable[[], Any]] | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads = 0
        self._shut = False

    def submit(self, fn: Callable[..., _T], /, *args: Any,
               **kwargs: Any) -> concurrent.futures.Future[_T]:
        """Run ``fn(*args, **kwargs)`` in a thread of the pool; its future.

        Raises:
            RuntimeError: the pool was shut down.
        """
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        with self._lock:
            if self._shut:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._jobs.put((future, functools.partial(fn, *args, **kwargs)))
            if not self._idle.acquire(timeout=0) and self._threads < self._workers:
                self._threads += 1
                threading.Thread(target=self._work, daemon=True,
                                 name=f"{self._name}-{self._threads}").start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No more jobs; with ``cancel_futures`` those not begun are cancelled. Threads
        end once idle; ``wait`` is not honoured (a stuck job is never waited for)."""
        with self._lock:
            self._shut = True
            if cancel_futures:
                while True:
                    try:
                        job = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                    if job is not None:
                        job[0].cancel()
            for _ in range(self._threads):
                self._jobs.put(None)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, run = job
            if future.set_running_or_notify_cancel():
                try:
                    result = run()
                except BaseException as exc:  # noqa: BLE001 - the job's, handed to its future
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del job, future, run  # nothing of a job kept while idle
            self._idle.release()


class ThreadSlots:
    """The threads of a pool, handed out on the loop: a job submitted once its slot is
    taken begins at once, never waiting in the pool's queue.

    What must be decided as a job begins (whether its consent still holds, read from
    the store) is decided on the loop when `take` returns, not when it was queued:
    the job then begins in a thread that is free. Each slot taken is given back
    with `give_back` once its job has ended, from whatever thread it ended on.
    Waiters are served in order.

    Args:
        size: the slots: the pool's threads.
    """

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def take(self) -> None:
        """Wait until a slot is free and take it (give it back with `give_back`)."""
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._give()  # handed a slot as it was cancelled: the next waiter's
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def give_back(self, loop: asyncio.AbstractEventLoop) -> None:
        """Give a slot back, from any thread; ``loop`` is the one it was taken on."""
        try:
            loop.call_soon_threadsafe(self._give)
        except RuntimeError:
            # The loop is closed: none of its waiters can ever run again.
            self._waiters.clear()
            self._free += 1

    def _give(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1


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
