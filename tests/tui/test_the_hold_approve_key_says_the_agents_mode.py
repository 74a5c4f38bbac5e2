"""The hold dialog's approve key says the agent's mode as it is now: in dangerous mode, or
no longer in it.

Rule (SPEC §7: the hold shows the agent; clearing its dangerous flag does not release the
hold): the key line read "approve (dangerous mode)" for every hold, also once the agent's
flag was cleared, where the RISK line above it said the agent "will act on it"; and a
flag cleared while the dialog was open left the key line as it was (only turning the flag
on redrew it).

(Left by round 32's closing note; fixed by helper tui33 in round 33.)
"""

from __future__ import annotations

from pathlib import Path

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.hold import HoldScreen

from .conftest import _settle, open_hold
from .world import make_app, open_engine

IN_MODE = "approve (agent in dangerous mode)"
OUT_OF_MODE = "approve (agent no longer in dangerous mode)"


async def _set_dangerous(store: Path, clock: VirtualClock, dangerous: bool) -> None:
    other = open_engine(store, clock)
    try:
        await other.set_node("yolo", {"dangerous": dangerous})
    finally:
        other.close()


def _keys(dialog: HoldScreen) -> str:
    return str(dialog.query_one("#hold-keys").render())


async def test_an_agent_in_dangerous_mode_is_named_so(tui_db: Path,
                                                      tui_clock: VirtualClock) -> None:
    """GIVEN yolo in dangerous mode, its hold's approve key says so."""
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        held = app.engine.prompts(state="held")[0].id
        dialog = await open_hold(pilot, held)
        assert isinstance(dialog, HoldScreen) and dialog.all_seen and dialog.armed
        assert IN_MODE in _keys(dialog), _keys(dialog)
    app.engine.close()


async def test_a_flag_cleared_before_is_not_called_dangerous(tui_db: Path,
                                                             tui_clock: VirtualClock) -> None:
    """GIVEN yolo's flag cleared since its prompt was held, the approve key says it is no
    longer in dangerous mode, as the RISK line does."""
    held_before = open_engine(tui_db, tui_clock)
    held = held_before.prompts(state="held")[0].id
    held_before.close()
    await _set_dangerous(tui_db, tui_clock, False)
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_hold(pilot, held)
        assert isinstance(dialog, HoldScreen) and dialog.all_seen and dialog.armed
        keys = _keys(dialog)
        assert OUT_OF_MODE in keys and IN_MODE not in keys, keys
        assert "will act on it" in str(dialog.query_one("#hold-risk").render())
    app.engine.close()


async def test_a_flag_cleared_under_the_dialog_is_followed(tui_db: Path,
                                                         tui_clock: VirtualClock) -> None:
    """WHEN another program clears yolo's flag while the dialog is open, THEN the approve
    key stops calling it dangerous mode."""
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        held = app.engine.prompts(state="held")[0].id
        dialog = await open_hold(pilot, held)
        assert isinstance(dialog, HoldScreen) and dialog.all_seen and dialog.armed
        assert IN_MODE in _keys(dialog), _keys(dialog)
        await _set_dangerous(tui_db, tui_clock, False)
        # (Until the dialog's keys say it, not only the engine's state: the dialog hears of
        # the change after the engine has it, which on a loaded machine can be after
        # `_settle`.)
        for _ in polls():
            await pilot.pause(0.05)
            node = app.engine.state.canvas.node("yolo")
            if node is not None and not node.data.get("dangerous") \
                    and OUT_OF_MODE in _keys(dialog):
                break
        await _settle(pilot)
        keys = _keys(dialog)
        assert app.screen is dialog and OUT_OF_MODE in keys and IN_MODE not in keys, keys
    app.engine.close()
