"""An update dialog whose pending version is approved, declined or replaced elsewhere
(another app on the same store, the service) closes and says how: its approve key is
never left offered for a question that is gone.

Rule (SPEC §4.4, §4.5: a person consents to the version shown; as the hold dialog does
for a prompt answered elsewhere, round 19): the dialog followed the package's grants but
not its pending version. Approved or declined by another program, it stayed open, its
``y`` still offered and still reading "approve version hash …": pressed, the approval was
refused as stale with an error a person could not connect to what they saw; replaced by
a newer version, the person could take it that the version read was the one pending.

(Left open by helper tui33 in round 33; fixed by helper tui34.)
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.update import UpdateScreen

from .conftest import DialogClock, _settle
from .test_the_update_dialog_follows_the_grants import NEW, _open_dialog, _pending
from .world import make_app, open_engine

NEWER = {**NEW, "version": "1.2.0"}


async def _approve(other: Engine) -> None:
    pending = other.pending_update("acme.x")
    assert pending is not None
    await other.approve("acme.x", review_hash=pending.pending_hash)


async def _decline(other: Engine) -> None:
    pending = other.pending_update("acme.x")
    assert pending is not None
    await other.decline_update("acme.x", pending_hash=pending.pending_hash)


async def _replace(other: Engine) -> None:
    await other.update("acme.x", manifest=json.dumps(NEWER, sort_keys=True))


@pytest.mark.parametrize(("act", "said"), [
    (_approve, "was approved elsewhere"),
    (_decline, "was declined elsewhere"),
    (_replace, "was replaced by another pending version elsewhere"),
])
async def test_the_dialog_closes_and_says_how(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock,
        act: Callable[[Engine], Awaitable[None]], said: str) -> None:
    await _pending(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        dialog = await _open_dialog(pilot)
        dialog_clock.arm()
        assert dialog.armed and dialog.all_seen
        shown = dialog.update.pending_hash
        before = app.engine.state.packages["acme.x"].hash
        # WHEN another program answers (or replaces) the version the dialog shows
        other = open_engine(tui_db, tui_clock)
        try:
            await act(other)
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if app.screen is not dialog:
                break
        await _settle(pilot)
        # THEN the dialog is closed, and the person is told how the version ended
        assert not isinstance(app.screen, UpdateScreen), app.screen
        messages = [n.message for n in app._notifications]
        assert any(said in m and shown in m and "nothing was approved here" in m
                   for m in messages), messages
        # AND the key that approved there does nothing here
        await pilot.press("y")
        await _settle(pilot)
        state: Any = app.engine.state.packages["acme.x"]
        assert (state.hash == shown) == (act is _approve), (state.hash, shown, before)
    app.engine.close()
