"""The test loop whose clock a loaded machine does not move (`tests.cpuclock`)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from tests.cpuclock import CpuClockLoop

T = TypeVar("T")


def _on_cpu_clock(main: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=CpuClockLoop) as runner:
        return runner.run(main)


def test_a_stall_of_the_process_does_not_move_the_clock() -> None:
    """A thread that is not running (here: asleep, as when unscheduled) spends no time."""

    async def main() -> float:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, CpuClockLoop)
        before = loop.time()
        time.sleep(0.3)  # the wall moves, the loop's thread computes nothing
        return loop.time() - before

    assert _on_cpu_clock(main()) < 0.1


def test_an_idle_wait_jumps_to_its_timer() -> None:
    """A loop with nothing to do until a timer is there at once, its clock moved by the
    wait; timers fire in their order."""

    async def main() -> tuple[float, list[int]]:
        loop = asyncio.get_running_loop()
        before, fired = loop.time(), list[int]()
        loop.call_later(20, fired.append, 2)
        loop.call_later(10, fired.append, 1)
        await asyncio.sleep(30)
        return loop.time() - before, fired

    started = time.monotonic()
    moved, fired = _on_cpu_clock(main())
    assert time.monotonic() - started < 10, "the loop slept through its waits"
    assert 30 <= moved < 31 and fired == [1, 2]


def test_with_no_timer_it_waits_for_another_thread() -> None:
    """Nothing scheduled: the loop blocks as any does, until another thread wakes it."""

    async def main() -> int:
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[int] = loop.create_future()
        threading.Timer(0.2, loop.call_soon_threadsafe, (woken.set_result, 7)).start()
        return await woken

    assert _on_cpu_clock(main()) == 7
