"""Ctrl-D at the demo's "Press Enter to open the TUI" ends the demo quietly.

In a terminal, ``arrowgate demo`` waits for Enter before the TUI takes the
screen. Standard input at its end (Ctrl-D) means no one will work the TUI: the
narrative stands, the hint for later is printed, and the exit code is 0 — no
EOFError traceback, and no TUI opened.

(Found in round 24: ``input()`` raised EOFError at the end of input, and the demo
ended in its traceback.)
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from engine.app import cli


def test_end_of_input_at_the_tui_question(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    opened: list[object] = []

    async def launch(engine: object) -> int:
        opened.append(engine)
        return 0

    monkeypatch.setattr(cli, "interactive", lambda: True)
    monkeypatch.setattr(cli, "_plugin", lambda group, name: launch)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    db = tmp_path / "app.db"
    try:
        code = cli.main(["demo", "--db", str(db), "--folder", str(tmp_path / "proj")])
    except EOFError:
        pytest.fail("the end of input escaped the demo as a traceback")
    out, _err = capsys.readouterr()
    assert code == 0 and not opened
    assert "Press Enter to open the TUI" in out and "arrowgate tui --demo" in out
