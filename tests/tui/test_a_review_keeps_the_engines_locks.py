"""``arrowgate tui --review`` reads the file or folder named without dropping the locks of
the app's engine: what the app writes then reaches the other programs on the database.

Rule (README "The TUI", "The database file"; round 29's `file_damage`): SQLite's locks
are POSIX record locks, the process's: closing any descriptor of the database file in
the process drops every lock the engine's connection holds on it, and the next program
to close the database deletes the write-ahead log under the app. ``--review`` read the
named file, or every file of the named folder, with plain opens after the engine had
opened the database: a package folder that holds the database (``--db ./app.db
--review .``) had the app's consent written where no other program reads it.

(Left by helper tui29 in round 29; found there in `file_damage` and `database_problem`.)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from engine.app.cli import CliError
from engine.app.replay import VirtualClock
from tui import app as tui_app
from tui import cli as tui_cli

from ..conftest import another_program_reads_consent
from .conftest import settle


def _run_review(db: Path, review: Path, while_open: Any) -> None:
    """``arrowgate tui --db db --review review``, headless; ``while_open(app)`` runs once
    the app has settled, then the app quits."""
    class Headless(tui_app.ArrowgateApp):
        CSS_PATH = str(Path(tui_app.__file__).with_name("app.tcss"))

        async def run_async(self, **_kwargs: Any) -> Any:  # type: ignore[override]
            async def look(pilot: Any) -> None:
                await settle(pilot)
                try:
                    await while_open(self)
                finally:
                    self.exit()
            return await super().run_async(headless=True, size=(120, 40), auto_pilot=look)

    args = argparse.Namespace(db=str(db), store=None, demo=False, review=str(review),
                              screen=None, fn=None)
    with mock.patch("engine.app.cli.interactive", lambda: True), \
            mock.patch.object(tui_app, "ArrowgateApp", Headless), \
            mock.patch("tui.tty.terminal_driver", lambda: None):
        tui_cli._cmd_tui(args)


def test_a_revoke_after_reviewing_the_databases_folder_reaches_the_other_programs(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    # GIVEN a package folder that also holds the app's database and its files
    folder = tui_db.parent
    (folder / "manifest.json").write_text(json.dumps({
        "name": "acme.fresh", "version": "0.1.0", "permissions": {"clipboard.write": {}}}))
    seen: dict[str, int] = {}

    async def revoke(app: Any) -> None:
        # AND another program read the database and closed it while the app was open
        seen["before"] = another_program_reads_consent(tui_db)
        # WHEN the person's revoke is written
        assert await app.engine.revoke("acme.standup", "agents.prompt")
        # THEN every other program reads it at once, not only once the app closes
        seen["after"] = another_program_reads_consent(tui_db)

    _run_review(tui_db, folder, revoke)
    assert seen["after"] == seen["before"] + 1, \
        "the revoke is held by the app alone: the other programs read the file without it"


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", ".anchor"])
def test_the_databases_own_files_are_refused_for_review_by_name(
        tui_db: Path, suffix: str) -> None:
    """The database, its log or its anchor named for review: a message that says so,
    and the app does not start. (The log is made as the engine opens the database.)"""
    named = Path(f"{tui_db}{suffix}")

    async def never(_app: Any) -> None:
        raise AssertionError("the app started on the database's own file as a manifest")

    with pytest.raises(CliError, match="is a file of the database .* not a manifest"):
        _run_review(tui_db, named, never)
