"""A store whose consent history holds ``suppressed`` entries (a card's refused consent
attempts beyond ``denial_log_limit``, summed up at close: SPEC §8 "Bounds") is a clean
store: the TUI's verification at start finds nothing and its header says nothing, on
SQLite and on PostgreSQL (which the TUI verifies in a process of its own too).

(Round 27 review: tui27's verify-at-start met flood27's suppressed entries only apart.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from engine.app.replay import VirtualClock
from engine.core.errors import ConsentError
from tests.conftest import polls

from .conftest import settle
from .world import build, make_app, open_engine


async def _suppressed(path: Path | str, clock: VirtualClock) -> None:
    """The card ``standup`` refused five grants with a limit of two: one summary."""
    engine = open_engine(path, clock)
    try:
        await engine.set_settings("w1", {"denial_log_limit": 2})
        for _ in range(5):
            with pytest.raises(ConsentError):
                await engine.grant("acme.standup", "terminals.write", by="card:standup")
    finally:
        engine.close()
    engine = open_engine(path, clock)
    try:
        actions = [e["action"] for e in engine.history.entries()
                   if e["principal"] == "card:standup"]
        assert actions == ["grant", "grant", "suppressed"], actions
    finally:
        engine.close()


async def _finding(path: Path | str, clock: VirtualClock) -> None:
    app = make_app(path, clock, start="grants")
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await settle(pilot)
        for _ in polls():
            await pilot.pause(0.05)
            if app.log_finding is not None:
                break
        assert app.log_finding == ""
        assert str(app.screen.query_one("#operator-banner", Static).render()) == ""
    app.engine.close()


async def test_suppressed_consent_entries_verify_clean_at_start(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    await _suppressed(tui_db, tui_clock)
    await _finding(tui_db, tui_clock)


@pytest.mark.postgres
async def test_suppressed_consent_entries_verify_clean_at_start_on_postgresql(
        pg_dsn: str, tmp_path: Path, tui_clock: VirtualClock) -> None:
    await build(pg_dsn, tmp_path / "ws", tui_clock)
    await _suppressed(pg_dsn, tui_clock)
    await _finding(pg_dsn, tui_clock)
