"""Fixtures of the Pilot tests: the shared canvas and a way to let the app settle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.notifications import Notification
from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from engine.app.replay import VirtualClock
from tests.appheap import _app_heap, real_gc  # noqa: F401 - fixtures of every Pilot test
from tests.conftest import polls
from tui.screens import arming

from .world import T0, build


@pytest.fixture(autouse=True)
def _toasts_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every toast stays in ``app._notifications`` for the test's whole run.

    A test reads what the person was told after the app settled, and on a loaded machine
    settling can outlast a toast's 5–15 s: Textual drops an expired toast as the list is
    read (and its widget's timer unnotifies it), so the assertion on what was said failed
    with an empty list (round 34's CI, under a 42-minute run,
    test_a_hold_ended_while_its_approval_waits). Whether a person was told must not depend
    on the machine's speed; no test here asserts that a toast went away.
    """
    monkeypatch.setattr(Notification, "time_left", property(lambda _self: 3600.0))


@pytest.fixture
def tui_clock() -> VirtualClock:
    """A frozen clock: time left on holds does not move unless a test moves it."""
    return VirtualClock(T0)


@pytest.fixture
async def tui_db(tmp_path: Path, tui_clock: VirtualClock) -> Path:
    """The database of `world.build`."""
    path = tmp_path / "tui.db"
    await build(path, tmp_path / "ws", tui_clock)
    return path


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for the app's workers (but the ones that run for ever) and its messages, and
    as a person would, for a consent dialog just opened to take its yes (`armed`)."""
    await _settle(pilot)
    await armed(pilot)


async def _settle(pilot: Pilot[Any]) -> None:
    app = pilot.app
    # The canvas analyses reach once the cursor rests (0.12 s), in a thread: on a
    # loaded machine that can take seconds, so wait up to 30 s (it stops at once
    # when nothing is pending).
    for _ in polls():
        # First let the screen take in what was posted (a moved cursor's message
        # is what starts the wait for an analysis).
        await pilot.pause()
        pending = getattr(app.screen, "reach_pending", None)
        if pending is None or not pending():
            break
        await pilot.pause(0.05)
    for _ in range(3):
        await pilot.pause()
        for worker in list(app.workers):
            if worker.group in ("engine-events", "engine-timers"):
                continue
            try:
                await worker.wait()
            except (WorkerCancelled, Exception):  # noqa: BLE001 - surfaced by the app
                pass
    await pilot.pause()


async def open_hold(pilot: Pilot[Any], prompt_id: str, key: str = "a") -> Any:
    """On the holds screen, put the cursor on ``prompt_id``'s row and open its dialog with
    ``key`` (``a`` approve, ``r`` reject); returns the screen then on top, once it has
    been on screen long enough for its approve key to work (`settle` waits for that)."""
    from textual.widgets import DataTable

    await settle(pilot)
    table = pilot.app.screen.query_one("#holds", DataTable)
    table.move_cursor(row=table.get_row_index(prompt_id))
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
    return pilot.app.screen


class DialogClock:
    """The consent dialogs' clock (`tui.screens.arming`), moved only by the test: however
    long a loaded machine takes between two keys typed in one go, no time passes for
    the dialog, so a test of typed-ahead keys never sees one arrive armed."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def arm(self) -> None:
        """Let the dialog's `ARM_S` pass."""
        self.now += arming.ARM_S + 0.1


@pytest.fixture
def dialog_clock(monkeypatch: pytest.MonkeyPatch) -> DialogClock:
    """Give the consent dialogs a `DialogClock` (then wait with `_settle`, not `settle`,
    while a dialog is open: `settle` waits for it to arm)."""
    clock = DialogClock()
    monkeypatch.setattr(arming, "time", clock)
    return clock


async def armed(pilot: Pilot[Any]) -> None:
    """Wait until the consent dialog on top (if one is) takes its yes: it has been on
    screen for `tui.screens.arming.ARM_S` seconds (a screen without ``armed`` is ready)."""
    waited = False
    for _ in polls():
        if getattr(pilot.app.screen, "armed", True):
            break
        waited = True
        await pilot.pause(0.05)
    if waited:
        await _settle(pilot)
