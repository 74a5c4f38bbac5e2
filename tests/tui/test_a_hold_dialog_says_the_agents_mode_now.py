"""A hold's approve dialog says the agent's mode as it is when the person approves, not as
it was when the dialog opened; a mode turned on meanwhile holds the approve key back again.

Rule (SPEC §7: the hold shows the agent; §4.5: a person consents to what they were shown):
clearing an agent's dangerous flag does not release its hold, and an operator may set it
again at any moment (another TUI, ``arrowgate node set``, the service). The dialog's RISK
line was written once, when it opened: opened while the flag was off, it said the agent
"will act on it" while the agent was back in dangerous mode — acting on the text with every
tool it has, asking nobody — and the approve key, armed long before, sent the text on.
The digest protects the text; nothing protected what the dialog said of the agent.

(Found by helper tui32 in round 32.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.hold import HoldScreen

from .conftest import DialogClock, _settle
from .world import build, make_app, open_engine


async def _mode_turned_on_under_the_dialog(store: Path | str, tui_clock: VirtualClock,
                                           dialog_clock: DialogClock) -> None:
    # GIVEN yolo's held prompt, yolo's dangerous flag turned off since (the hold stays)
    engine = open_engine(store, tui_clock)
    try:
        held = engine.prompts(state="held")[0].id
        await engine.set_node("yolo", {"dangerous": False})
    finally:
        engine.close()
    app = make_app(store, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(pilot)
        table = app.screen.query_one("#holds", DataTable)
        table.move_cursor(row=table.get_row_index(held))
        await pilot.press("a")
        await _settle(pilot)
        dialog = app.screen
        dialog_clock.arm()
        assert isinstance(dialog, HoldScreen) and dialog.all_seen and dialog.armed
        risk = str(dialog.query_one("#hold-risk").render())
        assert "dangerous mode" not in risk, risk
        # WHEN another program turns yolo's dangerous mode on while the person reads
        other = open_engine(store, tui_clock)
        try:
            await other.set_node("yolo", {"dangerous": True})
        finally:
            other.close()
        # (Until the dialog's RISK line says it, not only the engine's state, nor a fixed
        # pause after: the dialog hears of the change after the engine has it, which on a
        # loaded machine can be later than any pause.)
        for _ in polls():
            await pilot.pause(0.05)
            node = app.engine.state.canvas.node("yolo")
            if node is not None and node.data.get("dangerous") and "runs in dangerous mode" \
                    in str(dialog.query_one("#hold-risk").render()):
                break
        await pilot.pause()
        # THEN the RISK line says so, and the approve key waits to be read again
        risk = str(dialog.query_one("#hold-risk").render())
        assert "runs in dangerous mode" in risk, risk
        assert not dialog.armed
        await pilot.press("Y")
        await _settle(pilot)
        assert app.engine.prompt(held).state == "held"
        assert app.screen is dialog
        # AND once the dialog has been on screen a moment again, the approve key works
        dialog_clock.arm()
        await pilot.press("Y")
        await _settle(pilot)
        assert app.engine.prompt(held).state != "held"
    app.engine.close()


async def test_a_mode_turned_on_under_the_dialog_is_said_and_rearms_it(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock) -> None:
    await _mode_turned_on_under_the_dialog(tui_db, tui_clock, dialog_clock)


@pytest.mark.postgres
async def test_the_same_on_postgresql(pg_dsn: str, tmp_path: Path,
                                      tui_clock: VirtualClock,
                                      dialog_clock: DialogClock) -> None:
    await build(pg_dsn, tmp_path / "ws", tui_clock)
    await _mode_turned_on_under_the_dialog(pg_dsn, tui_clock, dialog_clock)
