"""A consent action on a store that failed under the app is refused and said to be not done.

A revoke, a grant or a hold approval confirmed after the store failed (a SQLite file
whose header was overwritten, a PostgreSQL server that cut the app off) changes
nothing, and the person is told it did not happen: never "revoked" while the
database that every other program reads cannot hold it.

(Found by helper tui25: on SQLite whose file was overwritten under the app, the
engine's connection still wrote the revoke into its write-ahead log and the TUI
said "agents.prompt revoked from acme.standup"; no other program could open the
database, and the engine opened afterwards refused it, so the person believed a
revoke that nothing but the open app held.)
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.screens.confirm import ConfirmScreen
from tui.screens.hold import HoldScreen

from .conftest import open_hold, settle
from .test_store_failure_is_a_message import broken_later  # noqa: F401 - a fixture
from .world import make_app


def _notes(app: Any, severity: str) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications if n.severity == severity]


async def _choose(pilot: Any, package: str, permission: str) -> None:
    app = pilot.app
    for table_id, key in (("#packages", package), ("#permissions", permission)):
        table = app.screen.query_one(table_id, DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index(key))
        await settle(pilot)


@pytest.mark.parametrize("action", ["revoke", "grant", "hold"])
async def test_consent_on_a_store_that_failed_is_not_done_and_said_so(
        broken_later: Any, tui_clock: VirtualClock, action: str) -> None:  # noqa: F811
    location, break_store = broken_later
    app = make_app(location, tui_clock, start="holds" if action == "hold" else "grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        engine = app.engine
        if action == "grant":  # a permission revoked before, to grant again
            await engine.revoke("acme.standup", "agents.output")
            await settle(pilot)
        before = {name: set(perms) for name, perms in engine.state.grants.items()}
        held = [p.id for p in engine.prompts(state="held")]
        # GIVEN the dialog of the action, open and read
        if action == "hold":
            dialog = await open_hold(pilot, held[0])
            assert isinstance(dialog, HoldScreen) and dialog.all_seen
        else:
            await _choose(pilot, "acme.standup",
                          "agents.prompt" if action == "revoke" else "agents.output")
            await pilot.press("v" if action == "revoke" else "g")
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, ConfirmScreen) and dialog.all_seen
        # WHEN the store fails under the app, and the person says yes
        break_store(app)
        await pilot.press("Y" if action == "hold" or getattr(dialog, "risk", None) else "y")
        await settle(pilot)
        # THEN nothing changed, and the person is told it was not done
        assert app.is_running, app.return_code
        assert {name: set(perms) for name, perms in engine.state.grants.items()} == before
        assert [p.id for p in engine.prompts(state="held")] == held
        done = [n for n in _notes(app, "information")
                if any(w in n for w in ("revoked", "granted", "approved"))]
        assert not done, done
        refused = [e for e in _notes(app, "error") if "refused" in e or "not done" in e]
        assert refused, _notes(app, "error")
