"""When the held prompt under the cursor is answered or ends elsewhere, the holds screen
says so: the cursor then rests on another prompt, and the person is told which.

Otherwise a person who read one prompt in the lower pane and pressed ``a`` opens
(and may approve, by habit) another one that took its place under the cursor.

(Found in round 19: a hold rejected by another process, or expired, left the
cursor silently on the next held prompt.)
"""

from __future__ import annotations

import re
from pathlib import Path

from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.screens.holds import HoldsScreen

from .conftest import open_hold, settle
from .world import add_hostile, make_app, open_engine


async def test_the_selected_hold_ending_elsewhere_is_said(tui_db: Path,
                                                          tui_clock: VirtualClock) -> None:
    other = await add_hostile(tui_db, tui_clock, text="Another prompt, from another card.")
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, HoldsScreen)
        yolo = next(p.id for p in app.engine.prompts(state="held") if p.id != other)
        table = screen.query_one("#holds", DataTable)
        table.move_cursor(row=table.get_row_index(yolo))
        await settle(pilot)
        # WHEN the prompt the person is reading is rejected elsewhere
        await app.engine.reject_hold(yolo)
        await settle(pilot)
        # THEN the cursor is on the other prompt, and the person is told both
        selected = screen.selected()
        assert selected is not None and selected.id == other
        said = [n.message for n in app._notifications]
        assert any(yolo in m and "no longer held" in m and other in m for m in said), said


async def test_a_hold_answered_here_is_not_said_twice(tui_db: Path,
                                                      tui_clock: VirtualClock) -> None:
    """The dialog says how a prompt answered in it ended; the list adds nothing."""
    other = await add_hostile(tui_db, tui_clock, text="Another prompt, from another card.")
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        yolo = next(p.id for p in app.engine.prompts(state="held") if p.id != other)
        await open_hold(pilot, yolo)
        await pilot.press("Y")
        await settle(pilot)
        assert app.engine.prompt(yolo).state in ("queued", "delivered")  # type: ignore[union-attr]
        said = [n.message for n in app._notifications]
        assert not any("no longer held" in m for m in said), said


async def test_what_was_said_stays_true_when_the_next_prompt_ends_too(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """The toast outlives the moment it tells of: it must not say where the cursor is
    *now* once that prompt has ended too. (Round 30 left it: "the cursor is on prompt p2
    now" stayed on screen after p2 expired and the cursor had moved to p3.)"""
    engine = open_engine(tui_db, tui_clock)
    try:
        for n in range(3):
            decision = await engine.call("standup", "agents.prompt", "yolo",
                                         {"text": f"prompt number {n}"})
            assert decision.outcome == "held", decision
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, HoldsScreen)
        held = [p.id for p in app.engine.prompts(state="held")]
        table = screen.query_one("#holds", DataTable)
        # WHEN the prompt under the cursor ends elsewhere, then the one it moved to
        for _ in range(2):
            selected = screen.selected()
            assert selected is not None
            await app.engine.reject_hold(selected.id)
            await settle(pilot)
        now = screen.selected()
        assert now is not None and len(held) == 4 and table.row_count == 2
        # THEN no toast still on screen says the cursor is on a prompt it is not on
        said = [n.message for n in app._notifications]
        assert sum("no longer held" in m for m in said) == 2, said
        claims = [m for m in said for where in re.findall(r"cursor is on prompt (\S+) now", m)
                  if where.rstrip(",") != now.id]
        assert not claims, claims
