"""When the row under a list's cursor goes (its prompt answered, its package withdrawn, its
permission dropped elsewhere), the cursor goes to the row that followed it (the one before
it at the end), never back to the first row; and while the row is there, the cursor stays
on it whichever other rows go.

Rule (round 19's, `tui.cursor`: a key meant for one row never acts unseen on another):
the holds table and the grants screen's tables are emptied and filled anew on each
change, which put the cursor on the first row when its own had gone. A person about to
approve the fifth held prompt, once another program rejected it, was on the first, a
prompt far from the one read; the toast named it, but the row under the person's eyes
was not it.

(Left open by helper tui33 in round 33; fixed by helper tui34.)
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Static

from engine import Engine, file_digests
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.grants import GrantsScreen
from tui.screens.holds import HoldsScreen

from .conftest import settle
from .test_grants_permission_cursor_moved_is_said import NARROWER
from .world import make_app, open_engine


async def _elsewhere(store: Path, clock: VirtualClock,
                     act: Callable[[Engine], Awaitable[object]]) -> None:
    """``act`` done by another program on the same store."""
    other = open_engine(store, clock)
    try:
        await act(other)
    finally:
        other.close()


async def _heard(pilot: Any, done: Callable[[], bool]) -> None:
    """Until the app has read the change made elsewhere (bounded), then settled."""
    for _ in polls():
        await pilot.pause(0.05)
        if done():
            break
    await settle(pilot)


async def _five_holds(store: Path, clock: VirtualClock) -> None:
    """Four more held prompts to the dangerous agent, beside the one the canvas has."""
    async def prompt(engine: Engine) -> None:
        for n in range(4):
            decision = await engine.call("standup", "agents.prompt", "yolo",
                                         {"text": f"prompt number {n}"})
            assert decision.outcome == "held", decision

    await _elsewhere(store, clock, prompt)


async def test_a_held_prompt_gone_puts_the_cursor_on_the_next(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    await _five_holds(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, HoldsScreen)
        table = screen.query_one("#holds", DataTable)
        held = [str(key.value) for key in table.rows]
        assert len(held) == 5
        table.move_cursor(row=3)
        await settle(pilot)
        # WHEN a prompt above the cursor's goes, the cursor stays on its prompt
        await _elsewhere(tui_db, tui_clock, lambda other: other.reject_hold(held[1]))
        await _heard(pilot, lambda: table.row_count == 4)
        selected = screen.selected()
        assert selected is not None and selected.id == held[3]
        # WHEN the prompt under the cursor goes, it moves to the one after it
        await _elsewhere(tui_db, tui_clock, lambda other: other.reject_hold(held[3]))
        await _heard(pilot, lambda: table.row_count == 3)
        selected = screen.selected()
        assert selected is not None and selected.id == held[4], (selected, held)
        # AND the last one gone, to the one before it
        await _elsewhere(tui_db, tui_clock, lambda other: other.reject_hold(held[4]))
        await _heard(pilot, lambda: table.row_count == 2)
        selected = screen.selected()
        assert selected is not None and selected.id == held[2], (selected, held)
        said = [n.message for n in app._notifications]
        assert any(held[3] in m and f"moved to prompt {held[4]}" in m for m in said), said
        assert any(held[4] in m and f"moved to prompt {held[2]}" in m for m in said), said
    app.engine.close()


async def test_the_pane_names_the_prompt_the_cursor_moved_to(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """The toast says "the cursor moved to prompt p6"; the pane below the list, which a
    person reads before pressing ``a``, names the prompt too: prompts of one card to one
    agent may read the same there. (It named the card, arrow and agent only.)"""
    await _five_holds(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, HoldsScreen)
        table = screen.query_one("#holds", DataTable)
        held = [str(key.value) for key in table.rows]
        table.move_cursor(row=3)
        await settle(pilot)
        await _elsewhere(tui_db, tui_clock, lambda other: other.reject_hold(held[3]))
        await _heard(pilot, lambda: table.row_count == 4)
        about = str(screen.query_one("#prompt-about", Static).render())
        assert about.startswith(f"prompt {held[4]} from card standup"), about
    app.engine.close()


async def test_a_package_gone_puts_the_cursor_on_the_next(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        table = screen.query_one("#packages", DataTable)
        assert [str(key.value) for key in table.rows] == ["acme.notes", "acme.reader",
                                                          "acme.standup"]
        table.move_cursor(row=table.get_row_index("acme.reader"))
        await settle(pilot)
        # WHEN another program withdraws the offer under the cursor
        await _elsewhere(tui_db, tui_clock, lambda other: other.remove_package("acme.reader"))
        # (Until the table no longer shows it: the engine's state changes first, and the
        # screen draws it after, which on a loaded machine can be after `settle`.)
        await _heard(pilot, lambda: "acme.reader" not in app.engine.state.packages
                     and "acme.reader" not in [str(key.value) for key in table.rows])
        # THEN the cursor is on the package after it, not on the first
        now = screen.selected_package()
        assert now is not None and now.name == "acme.standup", now
    app.engine.close()


async def test_a_permission_gone_puts_the_cursor_on_the_one_before_at_the_end(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        packages = screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.standup"))
        await settle(pilot)
        perms = screen.query_one("#permissions", DataTable)
        assert [str(key.value) for key in perms.rows] == ["agents.output", "agents.prompt",
                                                          "terminals.write"]
        perms.focus()
        perms.move_cursor(row=perms.get_row_index("terminals.write"))
        await settle(pilot)

        async def narrow(other: Engine) -> None:
            await other.update("acme.standup", manifest=NARROWER, digests=file_digests({
                "manifest.json": json.dumps(NARROWER, sort_keys=True),
                "index.js": "// acme.standup"}))
            pending = other.pending_update("acme.standup")
            assert pending is not None
            await other.approve("acme.standup", review_hash=pending.pending_hash)

        # WHEN another program approves a version without the permission under the cursor
        await _elsewhere(tui_db, tui_clock, narrow)
        await _heard(pilot, lambda: "terminals.write" not in app.engine.state.packages[
            "acme.standup"].manifest.permissions  # type: ignore[union-attr]
            and "terminals.write" not in [str(key.value) for key in perms.rows])
        # THEN the cursor is on the permission before it (it was the last), not the first
        assert screen.selected_permission() == "agents.prompt"
        said = [n.message for n in app._notifications]
        assert any("terminals.write" in m and "agents.prompt" in m for m in said), said
    app.engine.close()
