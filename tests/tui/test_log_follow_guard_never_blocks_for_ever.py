"""Following a log that gets a row every half second, a person's key still acts: the press
the follow guard refuses (a row arrived under the cursor as it was pressed, `SETTLE`)
stops following, the cursor staying on the row the notice names, so the next press acts
on that row whatever arrives meanwhile.

Found in round 21: a row every 0.5 s (less than `SETTLE`) kept a row newly arrived under
the cursor, and enter, ``c`` and ``p`` were refused at every press for as long as the
stream ran, while the notice said pressing again would act.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.widgets import log_view
from tui.widgets.log_view import LogView

from .conftest import settle
from .world import make_app


async def test_the_second_press_acts_under_a_steady_stream(
        tui_db: Path, tui_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(log_view, "_now", lambda: now[0])
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        view = screen.query_one(LogView)
        app.copy_to_clipboard("before")

        async def a_row_arrives(text: str) -> int:
            now[0] += 0.5
            await app.engine.call("standup", "agents.prompt", "claude", {"text": text})
            screen.refresh_data()
            await settle(pilot)
            return view.index.seq_at(view.cursor)

        named = await a_row_arrives("one")
        await pilot.press("c")
        await settle(pilot)
        assert app.clipboard == "before"
        assert any(f"row {named}" in n.message for n in app._notifications)
        await a_row_arrives("two")
        await pilot.press("c")
        await settle(pilot)
        assert app.clipboard != "before", "refused again: the stream blocks the key"
        assert json.loads(app.clipboard)["seq"] == named
