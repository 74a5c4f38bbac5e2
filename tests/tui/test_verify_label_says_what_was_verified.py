"""The arrow log's chain label says what was verified, and no more.

Rule (SPEC §8): `log verify` detects rows altered, removed or inserted and grants
written by hand; the TUI's label shows its finding as a person can read it, and a
verification that covered the first N rows does not read as covering rows logged since.

(Found by helper tui27 in round 27: a grant inserted by hand read "chain ✗ BROKEN: the
grants differ … (first bad row None)"; and "chain ✓ verified: 14 rows" stood over 17 rows,
3 of them logged by another program after the verification.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textual.widgets import Static

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.arrow_log import ArrowLogScreen

from .conftest import settle
from .world import make_app, open_engine


async def _label(pilot, until: str) -> str:
    screen = pilot.app.screen
    assert isinstance(screen, ArrowLogScreen)
    label = ""
    for _ in polls():
        await pilot.pause(0.05)
        label = str(screen.query_one("#verify", Static).render())
        if until in label:
            break
    return label


async def test_a_grant_written_by_hand_is_a_finding_without_a_row_number(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    # GIVEN a grant inserted by hand, the change feed's trigger dropped first
    db = sqlite3.connect(tui_db)
    with db:
        db.execute("drop trigger changes_grants_insert")
        db.execute("insert into grants values ('acme.notes', 'network', 0, 'operator')")
    db.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        # WHEN the log screen verifies the store
        label = await _label(pilot, "BROKEN")
        # THEN the finding is named, and no row number that is not one
        assert "BROKEN" in label and "grants differ" in label, label
        assert "None" not in label, label
        # AND the header says so too, from this one verification
        banner = str(pilot.app.screen.query_one("#operator-banner", Static).render())
        assert "log verify FAILED" in banner, banner


async def test_rows_logged_after_the_verification_are_not_called_verified(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        before = await _label(pilot, "verified")
        assert "verified" in before and "not verified" not in before, before
        # WHEN another program logs a row after the verification
        other = open_engine(tui_db, tui_clock)
        try:
            await other.call("standup", "agents.prompt", "codex", {"text": "later"})
            newest = other.log_end()
        finally:
            other.close()
        screen = app.screen
        for _ in polls():
            await pilot.pause(0.05)
            if f"{newest} rows" in str(screen.query_one("#filter-status", Static).render()):
                break
        # THEN the label does not read as covering it
        label = await _label(pilot, "not verified yet")
        assert "rows logged since are not verified yet" in label, label
