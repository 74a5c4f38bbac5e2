"""The app's heap freeze, kept out of the Pilot tests that are not about it.

`tui.app.ArrowgateApp.freeze_heap` runs a full collection and freezes the heap once
the first screen is drawn, and again after each reload; the app's end gives the heap
back (`gc.unfreeze`). In a pytest worker the heap is every module imported and the
whole collected suite: each of those collections walked it all (0.3 s in a process
running test_small.py alone, more in a worker of the whole suite; once or more a test).

Here a worker's heap is frozen once, after a full collection (so nothing frozen is
garbage), and the app is given a stand-in for `gc` (`AppGc`) that collects for real,
walking only what the test made since, but leaves the freezing to the worker: the app's
own `gc.unfreeze` would give the worker's heap back, for the next test's app to walk.
What the test made is never frozen, so it is freed as it would be without the app's
freeze. A test of the freeze itself takes the `real_gc` fixture: the app has the `gc`
module, and the heap starts with nothing frozen, so what the test sees frozen is the
app's doing (the next test freezes the worker's heap again).
"""

from __future__ import annotations

import gc

import pytest

import tui.app


class AppGc:
    """What `tui.app` calls of `gc`: a real collection; its freeze and thaw are the
    worker's (see the module's docstring)."""

    @staticmethod
    def collect() -> int:
        """A full collection of what is not frozen: what the test made."""
        return gc.collect()

    @staticmethod
    def freeze() -> None:
        """The worker's heap is frozen already; what the test made stays collectable."""

    @staticmethod
    def unfreeze() -> None:
        """The worker's heap stays frozen: the app froze nothing of its own."""


@pytest.fixture(autouse=True)
def _app_heap(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Freeze the worker's heap (when nothing is) and give the app `AppGc`, unless the
    test takes `real_gc`."""
    if "real_gc" in request.fixturenames:
        return
    if not gc.get_freeze_count():
        gc.collect()
        gc.freeze()
    monkeypatch.setattr(tui.app, "gc", AppGc)


@pytest.fixture
def real_gc() -> None:
    """The app freezes and thaws the real heap, and the test starts with none of it
    frozen; what was frozen before is frozen again by the next test that needs it."""
    gc.unfreeze()
