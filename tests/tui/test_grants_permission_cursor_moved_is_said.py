"""When the permission under the grants screen's cursor is no longer declared (a version
that drops it approved elsewhere), the screen says so and which permission the cursor
rests on now.

Rule (as for a package, and the holds screen's, round 19: a key meant for one row never
acts unseen on another): the permissions table kept the cursor's row, not its permission,
so a person about to revoke terminals.write, once another program approved a version
without it, found ``v`` asking to revoke another permission that took the row, with
nothing said of the change.

(Found by helper tui32 in round 32.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable

from engine import file_digests
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.grants import GrantsScreen

from .conftest import settle
from .world import build, make_app, open_engine

NARROWER = {"name": "acme.standup", "version": "1.1.0",
            "permissions": {"agents.prompt": {}, "agents.output": {}}, "tools": ["summarize"]}


async def _dropped_under_the_cursor(store: Path | str, tui_clock: VirtualClock) -> None:
    app = make_app(store, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        packages = screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.standup"))
        await settle(pilot)
        perms = screen.query_one("#permissions", DataTable)
        perms.focus()
        perms.move_cursor(row=perms.get_row_index("terminals.write"))
        await settle(pilot)
        # WHEN another program approves a version that no longer declares it
        other = open_engine(store, tui_clock)
        try:
            await other.update("acme.standup", manifest=NARROWER, digests=file_digests({
                "manifest.json": json.dumps(NARROWER, sort_keys=True),
                "index.js": "// acme.standup"}))
            pending = other.pending_update("acme.standup")
            assert pending is not None
            await other.approve("acme.standup", review_hash=pending.pending_hash)
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            manifest = app.engine.state.packages["acme.standup"].manifest
            # (Until the table no longer shows it too: the engine's state changes first,
            # and the screen draws it after, which on a loaded machine can be after
            # `settle`.)
            if manifest is not None and "terminals.write" not in manifest.permissions \
                    and "terminals.write" not in [str(key.value) for key in perms.rows]:
                break
        await settle(pilot)
        # THEN the person is told it is gone and which permission the cursor is on now
        now = screen.selected_permission()
        assert now is not None and now != "terminals.write"
        said = [n.message for n in app._notifications]
        assert any("terminals.write" in m and now in m for m in said), said
    app.engine.close()


async def test_the_selected_permission_dropped_elsewhere_is_said(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    await _dropped_under_the_cursor(tui_db, tui_clock)


@pytest.mark.postgres
async def test_the_same_on_postgresql(pg_dsn: str, tmp_path: Path,
                                      tui_clock: VirtualClock) -> None:
    await build(pg_dsn, tmp_path / "ws", tui_clock)
    await _dropped_under_the_cursor(pg_dsn, tui_clock)
