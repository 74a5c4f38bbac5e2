"""A hold that ends elsewhere while its approval waits for the operator check is not
approved, and its dialog does not stay open over it.

Rule (SPEC §7): a hold rejected, expired or cancelled elsewhere can no longer be
approved: the approval typed before is refused, the person is told how the hold ended,
and the dialog closes rather than stay open, offering its approve key for a prompt that
is no longer held.

(Found by helper tui27 in round 27: the dialog ignored the change while its approval
waited, then stayed open after the refusal, its approve key offered again.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.app import ArrowgateApp
from tui.screens.checking import CheckingScreen
from tui.screens.hold import HoldScreen
from tui.screens.holds import HoldsScreen

from .conftest import open_hold, settle
from .test_consent_check_never_blocks_the_app import (
    SlowCheck,
    _press_yes,
    _state,
    _wait_started,
)
from .world import add_hostile, build, open_engine


async def _rejected_elsewhere_while_approving(store: Path | str, tui_clock: VirtualClock,
                                             held: str) -> None:
    check = SlowCheck()
    app = ArrowgateApp(open_engine(store, tui_clock), operator=check, start="holds")
    app.OPERATOR_RECHECK_S = 3600.0  # only the consent action's own look
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        dialog = await open_hold(pilot, held)
        assert isinstance(dialog, HoldScreen) and dialog.all_seen
        try:
            pressed = _press_yes(pilot)
            await _wait_started(pilot, check)
            # WHEN another program rejects the hold while the approval waits for the check
            other = open_engine(store, tui_clock)
            try:
                await other.reject_hold(held)
            finally:
                other.close()
            for _ in polls():
                await pilot.pause(0.05)
                if app.engine.prompt(held).state != "held":
                    break
        finally:
            check.release.set()
        await pressed
        for _ in polls():
            await pilot.pause(0.05)
            if not any(isinstance(s, CheckingScreen) for s in app.screen_stack):
                break
        await settle(pilot)
        # THEN it stays rejected, the person is told, and the dialog is closed
        assert _state(app, held) == "rejected"
        said = [n.message for n in app._notifications]
        assert any(held in m and "rejected" in m for m in said), said
        assert [type(s) for s in app.screen_stack] == [HoldsScreen]
    app.engine.close()


async def test_a_hold_rejected_elsewhere_while_its_approval_waits_is_not_approved(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    held = await add_hostile(tui_db, tui_clock, text="Short: rm -rf the backups.")
    await _rejected_elsewhere_while_approving(tui_db, tui_clock, held)


@pytest.mark.postgres
async def test_the_same_on_postgresql(pg_dsn: str, tmp_path: Path,
                                      tui_clock: VirtualClock) -> None:
    await build(pg_dsn, tmp_path / "ws", tui_clock)
    engine = open_engine(pg_dsn, tui_clock)
    try:
        held = engine.prompts(state="held")[0].id
    finally:
        engine.close()
    await _rejected_elsewhere_while_approving(pg_dsn, tui_clock, held)
