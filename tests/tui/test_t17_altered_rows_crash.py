"""A log row altered by hand is shown (and named by verify), never a traceback.

(t17) engine/store/decoding.py: "A reader must then still show every row, that
one included, so that whoever runs verify can look at what it names ... never
raised as a traceback." The TUI's log screen — where a person goes to look at
what `log verify` reported — ends the whole app instead:

- a row whose ``t`` is not a number: `format_row` (tui/widgets/log_view.py:92)
  calls ``float(row.get("t") or 0)`` inside `render_line`; the app exits with
  ``ValueError: could not convert string to float`` as soon as the log opens;
- a row whose payload is a BLOB: `describe_row` (tui/screens/detail.py:41)
  calls ``json.dumps`` on bytes; opening the row's detail (enter) ends the app
  with ``TypeError: Object of type bytes is not JSON serializable``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.widgets.log_view import LogView

from .conftest import settle
from .screen import screen_output
from .world import make_app


@pytest.mark.parametrize(("column", "value"), [("t", "garbage"), ("payload", b"\x00\xff")],
                         ids=["time-not-a-number", "payload-a-blob"])
async def test_an_altered_row_is_shown_not_a_crash(tui_db: Path, tui_clock: VirtualClock,
                                                   column: str, value: object) -> None:
    conn = sqlite3.connect(tui_db)
    conn.execute(f"update log set {column} = ? where seq = 2", [value])  # noqa: S608
    conn.commit()
    conn.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        view = screen.query_one(LogView)
        view.cursor, view.follow = 1, False  # row 2
        await pilot.press("enter")
        await settle(pilot)
        assert "row 2" in screen_output(app)[0]
        await pilot.press("escape")
        await pilot.press("c")  # copy the row as JSON
        await settle(pilot)
    assert app._exception is None, app._exception  # noqa: SLF001
