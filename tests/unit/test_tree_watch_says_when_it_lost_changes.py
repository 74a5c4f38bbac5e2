"""A watch whose kernel queue overflowed ends, saying so: a card is never left
believing it saw every change when some were lost.

Rule: inotify drops events once its queue is full (``IN_Q_OVERFLOW``); the changes
since are unknown. `engine.effects.treewatch.watch_tree` then ends with
`Overflowed` (the card's watch ends with ``fs.watch.ended``, reason
``Overflowed``, and the card may look again and watch anew) rather than going on
as if nothing was missed.

Found in round 19 (the review): the overflow event was skipped, and the watch went
on reporting later changes with the lost ones never told.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engine.effects import treewatch
from tests.conftest import polls


def _queue_limit() -> int:
    return int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())


async def test_an_overflowed_queue_ends_the_watch(tmp_path: Path) -> None:
    limit = _queue_limit()
    if limit > 100_000:
        pytest.skip(f"the kernel queues {limit} events: too many files to make here")
    folder = tmp_path / "ws" / "busy"
    folder.mkdir(parents=True)
    end = asyncio.Event()
    with ThreadPoolExecutor(1) as pool:
        batches = treewatch.watch_tree(tmp_path / "ws", ("busy",), end, pool)
        first = asyncio.ensure_future(batches.__anext__())
        for _ in polls():  # until the walk has set its watches
            (folder / "probe").write_text("x")
            await asyncio.sleep(0.02)
            if first.done():
                break
        assert first.done(), "the watch never reported its first change"
        # WHEN far more changes come than the kernel queues, with nobody reading
        for i in range(limit + 1000):
            (folder / f"f{i}").touch()
        # THEN the watch ends, saying changes were lost
        with pytest.raises(treewatch.Overflowed):
            while True:
                await asyncio.wait_for(batches.__anext__(), 30)
        end.set()
