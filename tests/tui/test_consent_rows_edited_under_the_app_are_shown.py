"""A grant another program puts back in the store under the open app is shown as it is in
the store before a person acts on it, on both stores.

Rule: what the grants screen shows, and what its dialogs offer, is what the store holds:
a revoked grant flipped back on by another program (a shell's ``insert``) shows as
granted, and granting it again is not offered as if it were still revoked.

(Checked by helper tui26 in round 26: the app's one-second look at the file reads its
header and schema only, so the question was whether an edit of the consent tables'
rows reaches the screen. It does, through the stores' change feed, which their triggers
fill for every edit of a state table; this test holds that.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .world import build, make_app


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path,
                tui_clock: VirtualClock) -> str:
    """The world's store, on SQLite or on PostgreSQL."""
    location = str(tmp_path / "tui.db") if request.param == "sqlite" else \
        request.getfixturevalue("pg_dsn")
    await build(location, tmp_path / "ws", tui_clock)
    return location


def _grant_by_hand(location: str, package: str, permission: str) -> None:
    """Another program's insert into the grants table (no engine of arrowgate's)."""
    row = (package, permission, 0, "a shell")
    if location.startswith("postgresql://"):
        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute('insert into grants (package, permission, t, "by") '
                         "values (%s, %s, %s, %s)", row)
        return
    conn = sqlite3.connect(location)
    try:
        conn.execute("insert into grants (package, permission, t, by) values (?, ?, ?, ?)",
                     row)
        conn.commit()
    finally:
        conn.close()


async def test_a_grant_put_back_by_another_program_is_shown_before_a_person_acts(
        store: str, tui_clock: VirtualClock) -> None:
    app = make_app(store, tui_clock, start="grants")
    try:
        await _flip_back_and_look(app, store)
    finally:
        app.engine.close()


def _shown(screen: Any) -> bool:
    """Whether the grants screen has drawn the grant put back, where it would show it: the
    engine's state has it first, and the screen redraws after, which on a loaded machine
    can be after `settle`. Moving the cursor onto acme.standup from another package
    draws its permissions afresh; if the cursor is on it already, its table is the one
    the test reads, so it must say granted."""
    package = screen.selected_package()
    if package is None or package.name != "acme.standup":
        return True
    row = " ".join(map(str, screen.query_one("#permissions", DataTable).get_row(
        "agents.output")))
    return "granted" in row and "not granted" not in row


async def _flip_back_and_look(app: Any, store: str) -> None:
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        engine = app.engine
        await engine.revoke("acme.standup", "agents.output")
        await settle(pilot)
        assert "agents.output" not in engine.state.grants["acme.standup"]
        # WHEN another program puts the grant back under the app
        _grant_by_hand(store, "acme.standup", "agents.output")
        screen: Any = app.screen
        for _ in polls():
            await pilot.pause(0.05)
            if "agents.output" in engine.state.grants["acme.standup"] and _shown(screen):
                break
        await settle(pilot)
        # THEN the app holds what the store holds, and the screen shows it
        assert "agents.output" in engine.state.grants["acme.standup"]
        for table_id, key in (("#packages", "acme.standup"), ("#permissions", "agents.output")):
            table = screen.query_one(table_id, DataTable)
            table.focus()
            table.move_cursor(row=table.get_row_index(key))
            await settle(pilot)
        row = screen.query_one("#permissions", DataTable).get_row("agents.output")
        assert "granted" in " ".join(map(str, row)) and "not granted" not in \
            " ".join(map(str, row)), row
        # AND granting it is not offered as if it were still revoked
        await pilot.press("g")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        said = [n.message for n in app._notifications]
        assert any("already granted" in m for m in said), said
