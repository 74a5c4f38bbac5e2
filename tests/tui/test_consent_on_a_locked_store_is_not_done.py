"""A consent action while another program holds the SQLite file's write lock (a
``sqlite3`` shell left in a transaction, a backup tool) is said to be not done, naming
the lock, and what stands: the app's loop answers meanwhile, and nothing changed.

(Found in round 26: the revoke held the app's loop for the whole busy timeout, then
showed "revoke: refused" with "database is locked", saying neither that it was not done
nor that the grant still stood.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

import engine.engine as engine_module
from engine.app.replay import VirtualClock
from tests.durability.test_a_program_holding_the_sqlite_lock_never_stalls_the_loop import held
from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .world import make_app


def _notes(app: Any, severity: str) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications if n.severity == severity]


async def test_a_revoke_on_a_locked_store_is_not_done_and_the_grant_stands(
        tui_db: Path, tui_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "BUSY_TIMEOUT_S", 0.5)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        engine = app.engine
        for table_id, key in (("#packages", "acme.standup"), ("#permissions", "agents.prompt")):
            table = app.screen.query_one(table_id, DataTable)
            table.focus()
            table.move_cursor(row=table.get_row_index(key))
            await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.all_seen
        with held(tui_db):
            # WHEN the person confirms the revoke while another program holds the lock
            await pilot.press("Y" if getattr(dialog, "risk", None) else "y")
            await settle(pilot)
            await pilot.pause(1.0)
        await settle(pilot)
        # THEN the grant stands, and the person is told it was not done, and why
        assert engine.state.granted("acme.standup", "agents.prompt")
        notes = _notes(app, "error")
        said = [n for n in notes if "not done" in n and "locked by another program" in n
                and "grant of agents.prompt to acme.standup stands" in n]
        assert said, notes
