"""Prompts and replies (issue 18 item 13): each prompt's state and the agent's reply."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from engine.app.replay import VirtualClock
from tui.screens.prompts import PromptsScreen

from .conftest import settle
from .world import make_app


async def test_prompt_states_and_the_reply_after_approval(tui_db: Path,
                                                          tui_clock: VirtualClock) -> None:
    """5 lists every prompt with its state; once approved and answered, the reply shows."""
    # GIVEN yolo's held prompt, approved, and the agent's answer
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        held = app.engine.prompts(state="held")[0]
        await app.engine.approve_hold(held.id, text_sha256=held.text_sha256)
        delivered = app.engine.prompt(held.id)
        assert delivered is not None and delivered.state == "delivered"
        await app.engine.agent_replied("yolo", "Deleted [b]build/[/b] and redeployed \x1b[2J")
        # WHEN the person opens the prompts screen
        await pilot.press("5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PromptsScreen)
        table = screen.query_one("#prompts", DataTable)
        states = {str(table.get_row(key)[0]): str(table.get_row(key)[1]) for key in table.rows}
        # THEN every prompt is there with its state
        assert states == {p.id: p.state for p in app.engine.prompts()}
        assert states[held.id] == "replied"
        table.move_cursor(row=table.get_row_index(held.id))
        await settle(pilot)
        detail = str(screen.query_one("#prompt-detail", Static).render())
        assert "replied" in detail and "approved or answered by: operator" in detail
        assert "Delete the build folder" in detail
        assert "Deleted [b]build/[/b] and redeployed ␛[2J" in detail
        # AND a prompt still queued says it was not delivered
        queued = [p for p in app.engine.prompts() if p.state == "queued"]
        if queued:
            table.move_cursor(row=table.get_row_index(queued[0].id))
            await settle(pilot)
            assert "not delivered yet" in str(screen.query_one("#prompt-detail", Static).render())
