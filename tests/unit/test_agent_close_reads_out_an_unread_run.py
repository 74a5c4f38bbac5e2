"""Closing an agent whose run floods its output ends, whatever output is left unread.

Rule: `CommandAgent.aclose` kills the run's tree and then reads its output pipe
to its end before it waits for the process: asyncio stops reading a pipe whose
buffer is full, and a process is not done until its pipes have ended, so
waiting alone would wait for ever.

(Found in round 21: ``aclose`` of an agent whose run was printing without pause
never returned, so neither did ``Engine.aclose``; round 20's count-based test
of the agent's share of the loop hung there.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from engine.effects.drivers import CommandAgent

from ..conftest import until


class _Host:
    """A host that takes the driver's reports and does nothing with them."""

    def output(self, node: str, text: str) -> None:
        pass

    def replied(self, node: str, text: str, **_more: object) -> None:
        pass

    def exited(self, node: str, code: int) -> None:
        pass


async def test_closing_a_flooding_run_ends(tmp_path: Path) -> None:
    driver = CommandAgent("a1", [sys.executable, "-c",
                                 "import sys\nwhile True: sys.stdout.write('y\\n' * 4096)"])
    await driver.start(_Host(), str(tmp_path))  # type: ignore[arg-type]
    real_feed = driver._screen.feed
    fed = 0

    def counted_feed(data: bytes) -> None:
        nonlocal fed
        fed += 1
        real_feed(data)

    driver._screen.feed = counted_feed  # type: ignore[method-assign]
    driver.submit("flood")
    try:
        await until(lambda: fed > 0, timeout=30)
        proc = driver._proc
        assert proc is not None and proc.stdout is not None
        stdout = proc.stdout
        # GIVEN output asyncio has stopped reading (its buffer is full) while the
        # agent's reader is busy elsewhere (cancelled, as a node's removal does)
        driver._task.cancel()  # type: ignore[union-attr]
        await asyncio.gather(driver._task, return_exceptions=True)  # type: ignore[arg-type]
        await until(lambda: len(stdout._buffer) > 2 * stdout._limit,  # type: ignore[attr-defined]
                    timeout=30)
        # WHEN the agent is closed THEN that ends
        async with asyncio.timeout(20):
            await driver.aclose()
        assert proc.returncode is not None
    finally:
        driver.close()
