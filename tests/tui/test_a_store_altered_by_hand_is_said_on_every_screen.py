"""A store altered by hand is said on every screen, not only on the arrow log's label.

Rule (SPEC §8): `log verify` detects rows altered, removed or inserted and grants written
by hand. The TUI shows what the store holds, a grant written by hand as granted; so it
verifies the store when it starts and says a finding in every screen's header (and once
as a message), as the person may never open the arrow log. A clean store says nothing.

(Found by helper tui27 in round 27: a grant inserted by hand with the change feed's
trigger dropped showed as "✓ granted" on the grants screen with no sign; only the arrow
log's own label, on another screen, said BROKEN.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from textual.widgets import Static

from engine.app.replay import VirtualClock
from tests.conftest import polls

from .conftest import settle
from .world import build, make_app


def _banner(app) -> str:
    return str(app.screen.query_one("#operator-banner", Static).render())


async def test_a_grant_written_by_hand_is_said_in_the_header_of_the_grants_screen(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    # GIVEN a grant inserted by hand, the change feed's trigger dropped first
    db = sqlite3.connect(tui_db)
    with db:
        db.execute("drop trigger changes_grants_insert")
        db.execute("insert into grants values ('acme.notes', 'network', 0, 'operator')")
    db.close()
    # WHEN the TUI opens on the grants screen
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await settle(pilot)
        for _ in polls():
            await pilot.pause(0.05)
            if "log verify" in _banner(app):
                break
        # THEN its header says the store fails verification, and a message says what
        assert "log verify" in _banner(app) and "FAILED" in _banner(app), _banner(app)
        said = [n.message for n in app._notifications if n.severity == "error"]
        assert any("grants differ" in m for m in said), said
        # AND so does every other screen's
        await pilot.press("1")
        await settle(pilot)
        assert "log verify" in _banner(app), _banner(app)


async def test_a_clean_store_says_nothing(tui_db: Path, tui_clock: VirtualClock) -> None:
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await settle(pilot)
        for _ in polls():
            await pilot.pause(0.05)
            if app.log_finding is not None:
                break
        assert app.log_finding == ""
        assert _banner(app) == ""


@pytest.mark.postgres
async def test_a_grant_written_by_hand_is_said_on_postgresql(
        pg_dsn: str, tmp_path: Path, tui_clock: VirtualClock) -> None:
    """The same on the shared store: the grant written by hand, its triggers off."""
    await build(pg_dsn, tmp_path / "ws", tui_clock)
    with psycopg.connect(pg_dsn, autocommit=True) as db:
        db.execute("alter table grants disable trigger user")
        db.execute("insert into grants values ('acme.notes', 'network', 0, 'operator')")
        db.execute("alter table grants enable trigger user")
    app = make_app(pg_dsn, tui_clock, start="grants")
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await settle(pilot)
        for _ in polls():
            await pilot.pause(0.05)
            if "log verify" in _banner(app):
                break
        assert "log verify" in _banner(app) and "FAILED" in _banner(app), _banner(app)
    app.engine.close()
