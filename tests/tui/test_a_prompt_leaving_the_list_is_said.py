"""The prompts list shows the newest 1,000 prompts; when the one under the cursor leaves
it (newer prompts came), the person is told, with where it is now, and which prompt the
cursor moved to.

Rule (as the holds list, the grants screen and the canvas say a row gone from under the
cursor, round 34): the cursor moved to the oldest prompt still shown and its pane showed
that prompt in place of the one being read, nothing said; l then opened the log of
another arrow. Decided in round 35: the list is not kept longer for the row (its heading
says it shows the newest 1,000, and each prompt stays in its arrow's log); it says so.

(Left by helper tui34 in round 34; fixed by helper tui35 in round 35.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens import prompts as prompts_screen
from tui.screens.prompts import PromptsScreen

from .conftest import settle
from .world import make_app, open_engine


async def test_the_prompt_that_left_is_named_with_its_log(
        tui_db: Path, tui_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """The list shows the newest 2 (for 1,000); the cursor on the oldest, a new prompt
    elsewhere pushes it out: a message names it, its arrow's log and the cursor's prompt."""
    monkeypatch.setattr(prompts_screen, "_ROWS", 2)
    app = make_app(tui_db, tui_clock, start="prompts")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PromptsScreen)
        table = screen.query_one("#prompts", DataTable)
        assert [str(k.value) for k in table.rows] == ["p2", "p1"]
        table.move_cursor(row=table.get_row_index("p1"))
        await settle(pilot)
        # WHEN another program's card prompts an agent again
        other = open_engine(tui_db, tui_clock)
        try:
            await other.call("standup", "agents.prompt", "claude", {"text": "And again"})
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if "p1" not in [str(k.value) for k in table.rows]:
                break
        await settle(pilot)
        # THEN p1 left, the cursor is on p2, and the person is told so and where p1 is
        assert "p1" not in [str(k.value) for k in table.rows]
        selected = screen.selected()
        assert selected is not None and selected.id == "p2"
        assert "p2:" in str(screen.query_one("#prompt-detail", Static).render())
        messages = [n.message for n in app._notifications]
        assert any("prompt p1 left this list, which shows the 2 newest prompts" in m
                   and "the log of arrow e1" in m and "moved to prompt p2" in m
                   for m in messages), messages
    app.engine.close()


async def test_a_new_prompt_that_pushes_out_another_row_says_nothing(
        tui_db: Path, tui_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row leaving the list away from the cursor moves nothing and says nothing."""
    monkeypatch.setattr(prompts_screen, "_ROWS", 2)
    app = make_app(tui_db, tui_clock, start="prompts")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PromptsScreen)
        table = screen.query_one("#prompts", DataTable)
        table.move_cursor(row=table.get_row_index("p2"))
        await settle(pilot)
        other = open_engine(tui_db, tui_clock)
        try:
            await other.call("standup", "agents.prompt", "claude", {"text": "And again"})
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if "p1" not in [str(k.value) for k in table.rows]:
                break
        await settle(pilot)
        assert "p1" not in [str(k.value) for k in table.rows]
        selected = screen.selected()
        assert selected is not None and selected.id == "p2"
        assert not [n for n in app._notifications if "left this list" in n.message]
    app.engine.close()
