"""An event loop whose clock is the processor time its thread used, not the wall's.

A test that a loop waits "at most this long" (a commit held for `GATHER_SECONDS` and
not a moment more) measured on the wall clock fails whenever a loaded machine leaves
the process unscheduled for longer than the margin: 3 runs in 20 of
tests/unit/test_commit_gathering.py did, with two busy processes on two cores. On
`CpuClockLoop` time moves only while the loop's thread computes, and when the loop
would sit idle until its next timer it jumps there at once instead: the loop sees the
times it would see on a machine of its own (STYLE 7: a loop whose ``time()`` is
virtual), so a bound of the code under test is measured, never the machine's load.

Only for a loop that no other thread wakes while a timer is pending: a timer is due at
once, before what such a thread would have sent meanwhile.
"""

from __future__ import annotations

import asyncio
import selectors
import threading
import time
from typing import Any

__all__ = ["CpuClockLoop"]


class _JumpingSelector(selectors.DefaultSelector):
    """A selector that never sleeps until a timer: it looks, and when nothing is ready
    it counts the wait as passed (`waited`) instead. Waiting with no timer (``None``)
    still blocks, for I/O another thread makes."""

    def __init__(self) -> None:
        super().__init__()
        #: The seconds of waits jumped over so far.
        self.waited = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        if timeout is None:
            return list(super().select(None))
        ready = list(super().select(0))
        if not ready:
            self.waited += max(timeout, 0.0)
        return ready


class CpuClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose ``time()`` is its thread's processor time plus the idle waits
    it jumped over (`_JumpingSelector`). Made on the thread that runs it, as
    ``asyncio.Runner(loop_factory=CpuClockLoop)`` makes it."""

    def __init__(self) -> None:
        self._jumps = _JumpingSelector()
        super().__init__(self._jumps)
        self._cpu = time.pthread_getcpuclockid(threading.get_ident())

    def time(self) -> float:
        return time.clock_gettime(self._cpu) + self._jumps.waited
