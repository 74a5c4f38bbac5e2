"""The command line imports the service, and the engine imports its terminal emulator, only
when they are used.

Rule: every ``arrowgate`` command builds every verb's parser, and the tests start some
seven hundred such processes (round 36). The service (`engine.service.serve`: uvicorn, its
protocol) is imported when ``serve`` runs, not to describe its arguments
(`engine.service.command`); pyte and wcwidth when an agent or a terminal driver is made,
not with the engine (`engine.effects.drivers`). A test of what is imported, not of time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _loaded(code: str, names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` are imported after ``code`` runs in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-P", "-c",
         f"{code}\nimport sys, json\nprint(json.dumps([n for n in {names!r} if n in sys.modules]))"],
        capture_output=True, text=True, cwd=ROOT, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    return list(json.loads(out.stdout.splitlines()[-1]))


def test_building_the_command_line_imports_no_service() -> None:
    """Every verb's parser, ``serve``'s included, is built without the service."""
    code = "from engine.app.cli import build_parser\nbuild_parser(as_json=False)"
    assert _loaded(code, ("engine.service.serve", "uvicorn")) == []


def test_the_serve_verb_still_reaches_the_service(tmp_path: Path) -> None:
    """``serve``'s parser leads to the service: its refusal of a bad address is the service's."""
    out = subprocess.run(
        [sys.executable, "-P", "-m", "engine.app.cli", "serve", "--db", "x.db",
         "--socket", "s", "--listen", "127.0.0.1:1"],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (out.returncode, out.stderr) == (2, "arrowgate: give --socket or --listen, not both\n")


def test_the_engine_imports_no_terminal_emulator_until_a_driver_is_made() -> None:
    """Importing the engine loads no pyte; making a terminal driver does."""
    assert _loaded("import engine.engine", ("pyte", "wcwidth")) == []
    made = "from engine.effects.drivers import PtyTerminal\nPtyTerminal('t1')"
    assert _loaded(made, ("pyte", "wcwidth")) == ["pyte", "wcwidth"]


def test_building_the_command_line_imports_no_engine() -> None:
    """The verbs' parsers (the TUI's `tui` verb, registered by its plug-in, included) are
    built without the engine: a verb imports it when it runs (``--help`` never does)."""
    code = "from engine.app.cli import build_parser\nbuild_parser(as_json=False)"
    assert _loaded(code, ("engine.engine", "engine.store.sqlite")) == []
