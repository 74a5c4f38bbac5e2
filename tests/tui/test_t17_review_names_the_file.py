"""``arrowgate tui --review MANIFEST`` reviews that manifest, not what is installed.

(t17) README: ``--review MANIFEST`` shows "the install review of a manifest or
package folder". `tui.cli._cmd_tui` (tui/cli.py:95) offers the file only when no
package of its name is installed, then opens `ReviewScreen(name)` either way: for
an installed package the dialog reads "Install acme.standup? … It will be able
to: …" with the *installed* version's permissions, while the file the person
named (a new version, say) asks for a high-risk permission that is shown nowhere.
A person checking what a new version of a card wants reads a false answer.
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


def test_review_of_an_installed_packages_new_manifest(tui_db: Path, tui_clock: VirtualClock,
                                                      tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({
        "name": "acme.standup", "version": "2.0.0",
        "permissions": {"agents.prompt": {}, "terminals.write": {}, "agents.output": {},
                        "fs.write": {}}}))
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
    text = shown["text"]
    assert "acme.standup" in text
    # What the named file asks for, or a plain statement that it is not what is shown.
    assert "fs.write" in text or "2.0.0" in text, \
        "the review shown is the installed version's; the file's fs.write is not named"
