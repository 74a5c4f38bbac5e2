"""In follow mode a key that acts on the selected log row (enter opens its detail, ``c``
and ``p`` copy it) acts on a row the person saw selected: a row that arrived under the
cursor less than `SETTLE` seconds before the press is not acted on, and the person is
told which row arrived; pressed again once it has been on screen that long, it is.

Found in round 21: following the tail, a row arriving as enter (or ``p``) was pressed
moved the cursor first, and the key opened (or copied, to be pasted) a row the person
never saw selected: a card's payload in place of the one they chose.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.detail import DetailScreen
from tui.widgets import log_view
from tui.widgets.log_view import SETTLE, LogView

from .conftest import settle
from .world import make_app


@pytest.mark.parametrize("key", ["enter", "c", "p"])
async def test_a_row_that_arrived_at_the_press_is_not_acted_on(
        tui_db: Path, tui_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch,
        key: str) -> None:
    now = [1000.0]
    monkeypatch.setattr(log_view, "_now", lambda: now[0])
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        view = screen.query_one(LogView)
        seen = view.index.seq_at(view.cursor)
        app.copy_to_clipboard("before")
        # WHEN a row arrives (following the tail, the cursor moves onto it) as the key
        # is pressed
        now[0] += SETTLE * 2
        await app.engine.call("standup", "agents.prompt", "claude", {"text": "rm -rf ~"})
        screen.refresh_data()
        await settle(pilot)
        new = view.index.seq_at(view.cursor)
        assert new != seen
        await pilot.press(key)
        await settle(pilot)
        # THEN nothing is opened or copied, and the person is told which row arrived
        assert not isinstance(app.screen, DetailScreen) and app.clipboard == "before"
        assert any(f"row {new}" in n.message and "arrived" in n.message
                   for n in app._notifications), [n.message for n in app._notifications]
        # AND once it has been on screen, the same key acts on it
        now[0] += SETTLE
        await pilot.press(key)
        await settle(pilot)
        if key == "enter":
            assert isinstance(app.screen, DetailScreen)
        elif key == "c":
            assert json.loads(app.clipboard)["seq"] == new
        else:
            assert app.clipboard != "before"


async def test_a_row_the_person_moved_to_is_acted_on_at_once(
        tui_db: Path, tui_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(log_view, "_now", lambda: now[0])
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("up")
        await pilot.press("c")
        await settle(pilot)
        view = app.screen.query_one(LogView)
        assert json.loads(app.clipboard)["seq"] == view.index.seq_at(view.cursor)
