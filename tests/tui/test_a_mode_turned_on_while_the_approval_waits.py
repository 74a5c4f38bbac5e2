"""An approval given while the agent was not in dangerous mode is not carried out once the
agent was put in dangerous mode while the approval waited for the operator check.

Rule (SPEC §7: the hold shows the agent; §4.5: a person consents to what they were
shown): the hold dialog follows the agent's mode and holds its approve key back when the
mode is turned on under it (round 32). But a yes already pressed waits for the operator
check (up to seconds under tmux) and was then carried out whatever happened meanwhile:
a person who approved a prompt to an agent that "will act on it" sent it to an agent
acting on it with every tool it has, asking nobody. The mode is looked at again as the
approval is made; changed for the worse, nothing is approved, the person is told, and the
dialog stays open (its key waiting to be read again).

(Found by helper tui33 in round 33.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.hold import HoldScreen

from .conftest import _settle, open_hold, settle
from .test_consent_check_never_blocks_the_app import SlowCheck, _app, _wait_started
from .world import open_engine


async def _set_dangerous(store: Path, clock: VirtualClock, dangerous: bool) -> None:
    other = open_engine(store, clock)
    try:
        await other.set_node("yolo", {"dangerous": dangerous})
    finally:
        other.close()


async def _approve_while_the_mode_changes(store: Path, clock: VirtualClock, *,
                                          turned_on: bool, seen: bool = True
                                          ) -> tuple[str, list[str], bool]:
    """Approve yolo's hold (its flag cleared before); while the check waits, turn the flag
    on (or leave it off), and (``seen``) wait until the app has read the change. Returns
    the prompt's state, the messages and whether the dialog is still open."""
    first = open_engine(store, clock)
    held = first.prompts(state="held")[0].id
    first.close()
    await _set_dangerous(store, clock, False)
    check = SlowCheck()
    app = _app(store, clock, check)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        try:
            dialog = await open_hold(pilot, held)
            assert isinstance(dialog, HoldScreen) and dialog.all_seen and dialog.armed
            assert "will act on it" in str(dialog.query_one("#hold-risk").render())
            # WHEN the person approves, and while the operator check waits another program
            # puts yolo in dangerous mode (or does nothing)
            pressed = asyncio.ensure_future(pilot.press("Y"))
            await _wait_started(pilot, check)
            if turned_on:
                await _set_dangerous(store, clock, True)
                for _ in polls() if seen else ():
                    await pilot.pause(0.05)
                    node = app.engine.state.canvas.node("yolo")
                    if node is not None and node.data.get("dangerous"):
                        break
        finally:
            check.release.set()
        await pressed
        await _settle(pilot)
        prompt = app.engine.prompt(held)
        state = prompt.state if prompt is not None else "gone"
        said = [n.message for n in app._notifications]
        still_open = app.screen is dialog
        if still_open:
            await pilot.press("escape")
            await settle(pilot)
    app.engine.close()
    return state, said, still_open


async def test_the_approval_waits_for_a_new_look(tui_db: Path,
                                                 tui_clock: VirtualClock) -> None:
    """THEN the prompt is still held, the person is told why, and the dialog stays open."""
    state, said, still_open = await _approve_while_the_mode_changes(tui_db, tui_clock,
                                                                    turned_on=True)
    assert state == "held", said
    assert any("not approved" in m and "dangerous mode" in m for m in said), said
    assert still_open


async def test_an_unchanged_mode_is_approved(tui_db: Path, tui_clock: VirtualClock) -> None:
    """The same approval with the mode left as shown goes through (the check is no
    refusal of every approval that waited)."""
    state, said, _open = await _approve_while_the_mode_changes(tui_db, tui_clock,
                                                               turned_on=False)
    assert state in ("queued", "delivered"), (state, said)


async def test_a_change_the_app_has_not_read_yet_counts(tui_db: Path,
                                                        tui_clock: VirtualClock) -> None:
    """The flag turned on by another program the moment before the check ends, before the
    app's next look at the store: the approval reads the store first, so it is still not
    carried out."""
    state, said, still_open = await _approve_while_the_mode_changes(
        tui_db, tui_clock, turned_on=True, seen=False)
    assert state == "held", said
    assert any("not approved" in m and "dangerous mode" in m for m in said), said
    assert still_open
