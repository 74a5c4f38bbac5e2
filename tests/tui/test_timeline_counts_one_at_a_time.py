"""The log's timeline counts once at a time, however fast rows arrive.

Each change of the store (up to four a second while another process logs)
asks the timeline to count again, and each count is one grouped query over
every row under the filter: a second on a log of a million rows. A thread
worker made `exclusive` is only marked cancelled, its query runs on, so
the counts piled up, each a whole scan, competing with the screen for the
interpreter. A change that arrives while a count runs is counted once that
count ends, so the chart still ends up current.

(Found in round 20: another process appending ~5,000 rows a second to a
1,000,000-row log stalled the TUI's event loop for up to 1.6 s, 0.36 s with one
count at a time; `Timeline.recount` started a new count on every change.)
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from engine.app.replay import VirtualClock
from engine.store.logindex import LogIndex
from tui.messages import EngineChanged
from tui.screens.arrow_log import ArrowLogScreen
from tui.widgets.timeline import Timeline

from .conftest import settle
from .world import make_app, open_engine


async def test_changes_during_a_count_wait_for_it(tui_db: Path, tui_clock: VirtualClock,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten changes during a slow count: never two counts at once, and the last count
    sees the row logged last."""
    running, most, lock = 0, 0, threading.Lock()
    real = LogIndex.timeline

    def slow(self: LogIndex, buckets: int) -> Any:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        try:
            time.sleep(0.2)
            return real(self, buckets)
        finally:
            with lock:
                running -= 1

    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        monkeypatch.setattr(LogIndex, "timeline", slow)
        for _ in range(10):
            screen.post_message(EngineChanged("store"))
            await pilot.pause(0.02)
        # A refused call logged during the counts: the chart must end up with it.
        engine = open_engine(tui_db, tui_clock)
        try:
            await engine.call("standup", "agents.prompt", "codex", {"text": "late"})
            refused = sum(1 for r in engine.log_rows() if r["outcome"] == "denied")
        finally:
            engine.close()
        screen.post_message(EngineChanged("store"))
        for _ in range(60):
            await pilot.pause(0.05)
            if running == 0 and not any(w.group == "timeline" and not w.is_finished
                                        for w in app.workers):
                break
        await settle(pilot)
        assert most == 1, f"{most} counts ran at once"
        lines = {line.split()[0]: line for line in
                 str(screen.query_one(Timeline).render()).splitlines() if line.strip()}
        assert lines["refused"].endswith(f" {refused}"), lines
