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


async def test_the_screen_reads_only_the_newest_prompts(tui_db: Path, tui_clock: VirtualClock,
                                                        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The prompts screen asks the engine for the newest rows it shows, never the whole
    history (which grows without end: a card may prompt every ten seconds for years).

    Found in round 19: each refresh listed every prompt ever made (`Engine.prompts()`)
    to show the newest 1,000.
    """
    import tui.screens.prompts as screen_module

    monkeypatch.setattr(screen_module, "_ROWS", 1)
    app = make_app(tui_db, tui_clock, start="canvas")
    asked: list[dict[str, object]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        every = app.engine.prompts()
        assert len(every) > 1, "the demo world has more prompts than the screen shows"
        original = app.engine.prompts

        def spy(**kwargs: object):  # type: ignore[no-untyped-def]
            asked.append(kwargs)
            return original(**kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(app.engine, "prompts", spy)
        # WHEN the person opens the prompts screen
        await pilot.press("5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PromptsScreen)
        table = screen.query_one("#prompts", DataTable)
        # THEN it shows the newest one
        assert [str(table.get_row(key)[0]) for key in table.rows] == \
            [every[-1].id]
        # AND it asked only for those
        listings = [kw for kw in asked if "state" not in kw]
        assert listings and all(kw.get("newest") == 1 for kw in listings), asked
        title = str(screen.query_one("#prompts-title", Static).render())
        assert "newest" in title
