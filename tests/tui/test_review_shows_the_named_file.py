"""``arrowgate tui --review MANIFEST`` reviews that manifest, never another version under its name.

README: ``--review MANIFEST`` shows "the install review of a manifest or
package folder". For a package not installed the file is offered and its
install review shown; for one installed already, the file's own review is
shown to read, with what it is to the installed version, and nothing is
offered, updated or installed (no accept key): an update would narrow the
grants at once and hold the package's cards, not what a person asking to look
at a file asked for.

(Found by a helper: `_cmd_tui` opened `ReviewScreen(name)` either way, so for
an installed package the dialog showed the *installed* version's permissions
under the file's name, and a new version's fs.write was shown nowhere.)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any
from unittest import mock

from engine.app.replay import VirtualClock
from tui import app as tui_app
from tui import cli as tui_cli

from .conftest import settle
from .screen import screen_output
from .world import open_engine


def _review(tui_db: Path, manifest: Path) -> str:
    """The screen ``arrowgate tui --review manifest`` opens on, as text."""
    shown: dict[str, str] = {}

    class Headless(tui_app.ArrowgateApp):
        CSS_PATH = str(Path(tui_app.__file__).with_name("app.tcss"))

        async def run_async(self, **_kwargs: Any) -> Any:  # type: ignore[override]
            async def look(pilot: Any) -> None:
                await settle(pilot)
                shown["text"] = screen_output(self)[0]
                self.exit()
            return await super().run_async(headless=True, size=(140, 50), auto_pilot=look)

    args = argparse.Namespace(db=str(tui_db), store=None, demo=False, review=str(manifest),
                              screen=None, fn=None)
    with mock.patch("engine.app.cli.interactive", lambda: True), \
            mock.patch.object(tui_app, "ArrowgateApp", Headless), \
            mock.patch("tui.tty.terminal_driver", lambda: None):
        tui_cli._cmd_tui(args)
    return shown["text"]


def test_an_installed_packages_file_is_reviewed_as_the_file(tui_db: Path, tui_clock: VirtualClock,
                                                      tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({
        "name": "acme.standup", "version": "2.0.0",
        "permissions": {"agents.prompt": {}, "terminals.write": {}, "agents.output": {},
                        "fs.write": {}}}))
    before = _package(tui_db, tui_clock)
    text = _review(tui_db, manifest)
    assert "acme.standup" in text
    # What the named file asks for, and its version.
    assert "fs.write" in text and "2.0.0" in text, \
        "the review shown is the installed version's; the file's fs.write is not named"
    assert "nothing was offered or installed" in text
    assert "accept" not in text  # to read: nothing here installs it
    assert _package(tui_db, tui_clock) == before  # neither offered nor sent as an update


def test_review_of_a_package_not_installed_offers_the_file(tui_db: Path,
                                                           tui_clock: VirtualClock,
                                                           tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"name": "acme.fresh", "version": "0.1.0",
                                    "permissions": {"clipboard.write": {}}}))
    text = _review(tui_db, manifest)
    assert "Install acme.fresh?" in text and "clipboard.write" in text
    assert _package(tui_db, tui_clock)["acme.fresh"] == (False, None)


def _package(tui_db: Path, tui_clock: VirtualClock) -> dict[str, tuple[bool, str | None]]:
    """Each package: installed, and the hash of a version waiting for approval."""
    engine = open_engine(tui_db, tui_clock)
    try:
        return {name: (pkg.installed, pkg.pending_hash)
                for name, pkg in engine.state.packages.items()}
    finally:
        engine.close()
