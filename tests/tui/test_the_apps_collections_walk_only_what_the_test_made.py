"""Under the Pilot tests the app's heap freeze walks what the test made, not the worker.

Rule (tests/appheap.py): the app's full collections, once the first screen is drawn and
after each reload, walked a pytest worker's whole heap (every module and the collected
suite), and its end gave the heap back (`gc.unfreeze`) for the next test's app to walk
again. Now the worker's heap stays frozen across the Pilot tests, and what a test made
is never frozen, so it is freed as in a process without the app's freeze. The freeze
itself is tested with the real heap (test_canvas.py, `real_gc`).

(Round 36, helper tui36: the TUI tests' processor time.)
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from engine.app.replay import VirtualClock

from .conftest import settle
from .world import make_app


class _Cycle:
    """An object in a reference cycle: only a collection frees it."""

    def __init__(self) -> None:
        self.me = self


async def test_the_workers_heap_stays_frozen_and_the_tests_objects_collectable(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """An app drawn and ended leaves the worker's heap frozen; a cycle the test made
    before the app froze its heap is freed once dropped."""
    assert gc.get_freeze_count() > 0
    app = make_app(tui_db, tui_clock)
    cycle = _Cycle()
    gone = weakref.ref(cycle)
    async with app.run_test(size=(120, 30)) as pilot:
        # WHEN the app draws its first screen (and freezes the heap)
        await settle(pilot)
        assert app._froze  # noqa: SLF001 - the app did freeze
        # THEN a cycle made before is not frozen: dropped, a collection frees it
        del cycle
        gc.collect()
        assert gone() is None
    app.engine.close()
    # AND the app's end did not give the worker's heap back to the collector
    assert gc.get_freeze_count() > 0
