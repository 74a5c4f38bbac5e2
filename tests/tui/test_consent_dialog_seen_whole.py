"""A consent dialog's yes works only once all of what it consents to has been on screen:
an update's diff, a grant, a revoke are read whole before the yes, as a held prompt is
(SPEC §7, §4.4). A diff longer than the dialog scrolls; what is below the fold, or jumped
over, was not shown, so it was not consented to.

(Found in round 24: an update widening to 40 host patterns showed 14 of them in its dialog
at 80x24, with no sign of the rest (the key line was cut off as well), and ``y`` approved
all 40.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .screen import screen_output
from .world import make_app, open_engine

HOSTS = [f"h{n}.example.com" for n in range(40)]
WIDER = {"name": "acme.standup", "version": "1.1.0", "tools": ["summarize"],
         "permissions": {"agents.prompt": {}, "terminals.write": {}, "agents.output": {},
                         "network": {"hosts": HOSTS}}}


async def _pending_update(path: Path, clock: VirtualClock) -> None:
    engine = open_engine(path, clock)
    try:
        await engine.update("acme.standup", manifest=WIDER)
    finally:
        engine.close()


async def _open_update_dialog(pilot: object, app: object) -> ConfirmScreen:
    await settle(pilot)  # type: ignore[arg-type]
    table = app.screen.query_one("#packages", DataTable)  # type: ignore[attr-defined]
    table.move_cursor(row=table.get_row_index("acme.standup"))
    await settle(pilot)  # type: ignore[arg-type]
    await pilot.press("u")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    dialog = app.screen  # type: ignore[attr-defined]
    assert isinstance(dialog, ConfirmScreen)
    return dialog


async def test_an_update_longer_than_its_dialog_is_approved_only_once_read_through(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    await _pending_update(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_update_dialog(pilot, app)
        assert HOSTS[-1] not in screen_output(app)[0]  # below the fold
        # WHEN the person says yes before the end of the diff was on screen
        await pilot.press("y")
        await settle(pilot)
        # THEN nothing is approved, and the dialog says how to go on
        assert app.engine.state.packages["acme.standup"].is_pending
        assert isinstance(app.screen, ConfirmScreen)
        assert "Scroll through to the end" in screen_output(app)[0]
        # WHEN the person scrolls through to the end
        for _ in range(40):
            if app.screen.all_seen:  # type: ignore[attr-defined]
                break
            await pilot.press("pagedown")
            await settle(pilot)
        assert HOSTS[-1] in screen_output(app)[0]
        await pilot.press("y")
        await settle(pilot)
        # THEN the version shown is approved
        assert not app.engine.state.packages["acme.standup"].is_pending
        manifest = app.engine.state.packages["acme.standup"].manifest
        assert manifest is not None and set(manifest.hosts("network")) == set(HOSTS)


async def test_jumping_to_the_end_of_a_diff_does_not_count_the_middle(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    await _pending_update(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await _open_update_dialog(pilot, app)
        await pilot.press("end")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert not dialog.all_seen
        assert app.engine.state.packages["acme.standup"].is_pending
