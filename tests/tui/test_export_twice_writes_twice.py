"""Export (x) pressed twice writes two files, each whole, and says so each time.

The file is named by the second (``arrowgate-log-YYYYmmdd-HHMMSS.jsonl``) and
opened only if it does not exist; a second press within that second failed with
"Background task failed: [Errno 17] File exists", which reads as if the first
export failed too, and wrote nothing.

(Found in round 20: `ArrowLogScreen.action_export` opened the same name twice.)
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen

from .conftest import settle
from .world import make_app


async def test_export_pressed_twice_in_one_second(tui_db: Path, tui_clock: VirtualClock,
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Two presses, two files with every row, two "written" notices and no failure."""
    monkeypatch.chdir(tmp_path)
    # Both presses in one second, however slow the machine: the export's name is
    # made with time.strftime("...", time.gmtime()), given a fixed moment here.
    frozen, real = time.gmtime(1_800_000_000), time.gmtime
    monkeypatch.setattr("tui.screens.arrow_log.time.gmtime",
                        lambda *when: real(*when) if when else frozen)
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ArrowLogScreen)
        await pilot.press("x", "x")
        await settle(pilot)
        files = sorted(tmp_path.glob("arrowgate-log-*.jsonl"))
        assert len(files) == 2, files
        count = len(app.engine.log_rows())
        for file in files:
            rows = [json.loads(line) for line in file.read_text().splitlines()]
            assert len(rows) == count
        notes = [n.message for n in app._notifications]
        assert not [n for n in notes if "File exists" in n], notes
        assert sum("rows written to" in n for n in notes) == 2, notes
