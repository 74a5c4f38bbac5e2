"""Ctrl-C while ``arrowgate`` is still starting (its modules importing, in the first
second of any verb) ends it as Ctrl-C ends every verb: one line ``arrowgate:
interrupted`` (one JSON error under ``--json``), exit 130 (README "Command line"), never
a Python traceback of a KeyboardInterrupt inside an import.

The command is started as the console script pyproject.toml declares starts it
(``[project.scripts]``: ``from MODULE import FUNCTION; sys.exit(FUNCTION())``), so the
test holds what is installed, not one module's ``main``. SIGINT is sent as soon as the
child is importing (its interpreter has loaded ``_sqlite3``, which only the engine's
imports load), then again and again until it ends: a person pressing Ctrl-C twice must
see no traceback either.

(Found in round 28: ``arrowgate hold list`` interrupted at once printed a traceback
ending in ``KeyboardInterrupt`` inside ``importlib._bootstrap``, exit 1.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _console_script() -> list[str]:
    """The command the installed ``arrowgate`` runs, read from pyproject.toml."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["arrowgate"].partition(":")
    return [sys.executable, "-c",
            f"import sys; from {module} import {function}; sys.exit({function}())"]


def _sigint_as_in_a_terminal() -> None:
    # A suite started in the background (`cmd &`) runs with SIGINT ignored, which every
    # child inherits and Python keeps: the child would never see the signal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _importing(pid: int) -> bool:
    """Whether the process has begun importing the engine (``_sqlite3`` is mapped)."""
    try:
        return "_sqlite3" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:  # gone already, or /proc not readable yet
        return False


def _interrupt_at_start(args: list[str], tmp_path: Path) -> tuple[int | None, str]:
    """Start ``arrowgate ARGS``, send SIGINT as soon as it imports and every 2 ms after
    until it ends (bounded): its exit code (None if it never ended) and stderr."""
    child = subprocess.Popen(
        [*_console_script(), *args], cwd=ROOT, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
        preexec_fn=_sigint_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 30
        while child.poll() is None and not _importing(child.pid) \
                and time.monotonic() < deadline:
            time.sleep(0.001)
        while child.poll() is None and time.monotonic() < deadline:
            child.send_signal(signal.SIGINT)
            time.sleep(0.002)
        code = child.poll()
    finally:
        if child.poll() is None:
            child.kill()
        _, stderr = child.communicate(timeout=30)
    return code, stderr


@pytest.mark.parametrize("verb", [["hold", "list"], ["log", "verify"]])
def test_ctrl_c_while_importing_ends_quietly_with_130(verb: list[str], tmp_path: Path) -> None:
    code, stderr = _interrupt_at_start([*verb, "--db", str(tmp_path / "app.db")], tmp_path)
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert code == 130, (code, stderr)
    assert stderr.strip().splitlines()[-1] == "arrowgate: interrupted", stderr


def test_ctrl_c_while_importing_under_json_is_a_json_error(tmp_path: Path) -> None:
    code, stderr = _interrupt_at_start(["hold", "list", "--json", "--db",
                                        str(tmp_path / "app.db")], tmp_path)
    assert code == 130, (code, stderr)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines and all(json.loads(line) == {"error": {"message": "interrupted"}}
                         for line in lines), stderr
