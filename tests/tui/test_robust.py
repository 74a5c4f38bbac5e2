"""The app stays up when its database goes away or goes bad (issue 18 item 8)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine.app.replay import VirtualClock
from tui.messages import EngineChanged
from tui.widgets.log_view import LogView

from .conftest import settle
from .world import make_app


def _store_errors(app: object) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications  # type: ignore[attr-defined]
            if n.severity == "error"]


async def test_database_removed_while_open(tui_db: Path, tui_clock: VirtualClock) -> None:
    """Deleting the database under the app: a message on every screen, no crash."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        # WHEN the file and its WAL are removed
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(f"{tui_db}{suffix}"):
                os.remove(f"{tui_db}{suffix}")
        app.screen.query_one(LogView).reload()
        app.check_store_file()  # what the app's 1 s timer calls
        await settle(pilot)
        for key in ("1", "2", "3", "4", "2", "V"):
            await pilot.press(key)
            await settle(pilot)
        # THEN the app runs on and says what is wrong
        assert app.is_running
        assert any("tui.db" in e or "database" in e for e in _store_errors(app)), \
            _store_errors(app)
        assert not os.path.exists(tui_db)  # nothing made a new empty database
        # AND consent is refused: it would be written to the removed file only
        await pilot.press("3", "a")
        await settle(pilot)
        prompt = app.engine.prompts(state="held")[0]
        assert await app.consent("hold: reject", lambda: app.engine.reject_hold(prompt.id)) \
            is None
        assert app.engine.prompt(prompt.id).state == "held"  # type: ignore[union-attr]


async def test_database_corrupted_while_open(tui_db: Path, tui_clock: VirtualClock) -> None:
    """Garbage written over the database: errors are messages, the app stays up."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        app.engine.db.execute("pragma wal_checkpoint(TRUNCATE)")
        with open(tui_db, "r+b") as f:
            f.seek(0)
            f.write(b"\xde\xad\xbe\xef" * 4096)
        for key in ("1", "2", "3", "4", "2"):
            app.post_message(EngineChanged("store"))
            await pilot.press(key)
            await settle(pilot)
        await pilot.pause(0.6)  # the store watcher polls every 0.25 s
        await settle(pilot)
        assert app.is_running
        assert any("cannot be read" in e and "not a database" in e for e in _store_errors(app))
        assert app.return_code in (None, 0)


async def test_palette_survives_option_list_errors(tui_db: Path, tui_clock: VirtualClock,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An option list error while typing in the palette (textual 3714) does not end the app."""
    from textual.command import CommandList
    from textual.widgets.option_list import DuplicateID

    calls = {"n": 0}
    original = CommandList.add_options

    def flaky(self: CommandList, items: Any) -> CommandList:
        items = list(items)
        calls["n"] += bool(items)
        if calls["n"] == 1 and items:  # the first batch arrives as the list was refilled
            raise DuplicateID("Unable to add options with duplicate IDs")
        return original(self, items)

    monkeypatch.setattr(CommandList, "add_options", flaky)
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"hold")
        await settle(pilot)
        await pilot.pause(0.3)  # the palette adds results in 0.25 s batches
        await pilot.press(*": ap")
        await settle(pilot)
        await pilot.pause(0.3)
        await settle(pilot)
        assert app.is_running and calls["n"] >= 2
        assert app.screen.query_one(CommandList).option_count >= 1
