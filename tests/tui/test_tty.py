"""Keys come from the terminal even when standard input is not one (issue 18 item 6)."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.app.replay import VirtualClock
from tui.cli import exit_status
from tui.tty import terminal_driver

from .world import make_app


async def test_a_driver_reads_the_terminal_when_stdin_is_a_pipe(monkeypatch: pytest.MonkeyPatch,
                                                                tui_db: Path,
                                                                tui_clock: VirtualClock) -> None:
    """stdin not a tty: the driver's key input is the terminal device, a tty."""
    # GIVEN standard input that is not a terminal, and a terminal device (a pty)
    master, slave = os.openpty()
    try:
        r, w = os.pipe()
        pipe = os.fdopen(r)
        monkeypatch.setattr(sys, "__stdin__", pipe)
        # WHEN the TUI asks for its driver
        driver_class = terminal_driver(os.ttyname(slave))
        # THEN it reads from a terminal, not from the pipe
        assert driver_class is not None
        driver: Any = driver_class(make_app(tui_db, tui_clock))
        assert os.isatty(driver.fileno) and driver.input_tty
        assert driver.fileno != r
        os.close(driver.fileno)
        os.close(w)
        pipe.close()
    finally:
        os.close(master)
        os.close(slave)


def test_no_driver_without_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A path that is not a terminal (or cannot be opened) leaves Textual's default."""
    monkeypatch.setattr(sys, "__stdin__", io.StringIO())
    (tmp_path / "file").write_text("")
    assert terminal_driver(str(tmp_path / "file")) is None
    assert terminal_driver(str(tmp_path / "missing")) is None


def test_a_crash_exits_non_zero() -> None:
    """The app's return code wins over its return value: a crash is never status 0."""
    class Crashed:
        return_code = 1

    class Clean:
        return_code = 0

    assert exit_status(Crashed(), None) == 1
    assert exit_status(Clean(), None) == 0
    assert exit_status(Clean(), 3) == 3


def test_the_readme_names_every_screen_the_tui_opens_on(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's ``arrowgate tui`` line lists every ``--screen`` the verb takes (round
    28: ``prompts`` was left out)."""
    import re

    from engine.app.cli import main

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    said = re.search(r"\[--screen ([a-z|]+)\]`", readme)
    assert said is not None
    assert main(["tui", "--help"]) == 0
    taken = re.search(r"--screen \{([a-z,]+)\}", capsys.readouterr().out)
    assert taken is not None
    assert said.group(1).split("|") == taken.group(1).split(",")
