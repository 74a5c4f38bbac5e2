"""A log with a row removed by hand: the row under the cursor is the row acted on.

(t17) Without a filter the log view takes a row's position for ``seq - 1``
(`Positions.seq_at`, engine/store/logfilter.py: "sequence numbers have no gaps").
A row deleted by hand — what `log verify` reports, and what a person then opens
the log to look at — breaks that: `LogView._loaded` (tui/widgets/log_view.py:242)
files the page's rows by offset, so every row after the gap is drawn one line
early, while enter, ``c`` and ``p`` act on ``seq_at(cursor)``: on the line that
shows row 4 the detail (and the copied JSON) is row 3's — or nothing; on the one
showing row 5, row 4's. The last position never gets a row: `render_line` asks
for its page again on every frame, a few hundred worker threads a second for as
long as the log is open.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.detail import DetailScreen
from tui.widgets.log_view import LogView

from .conftest import settle
from .world import make_app


async def test_enter_opens_the_row_drawn_under_the_cursor(tui_db: Path,
                                                          tui_clock: VirtualClock) -> None:
    conn = sqlite3.connect(tui_db)
    conn.execute("delete from log where seq = 2")
    conn.commit()
    conn.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        view = screen.query_one(LogView)
        fetches = 0
        fetch = view._fetch  # noqa: SLF001

        def counted(*args: object) -> object:
            nonlocal fetches
            fetches += 1
            return fetch(*args)  # type: ignore[arg-type]

        view._fetch = counted  # type: ignore[method-assign]  # noqa: SLF001
        await pilot.pause(0.5)
        reads = fetches
        view.cursor, view.follow = 2, False
        await settle(pilot)
        drawn = view.row_at(view.cursor)
        assert drawn is not None
        await pilot.press("enter")
        await settle(pilot)
        opened = app.screen.row["seq"] if isinstance(app.screen, DetailScreen) else None
    problems = []
    if opened != drawn["seq"]:
        problems.append(f"the line shows row {drawn['seq']}; enter opened "
                        + (f"row {opened}" if opened is not None else "nothing"))
    if reads >= 10:
        problems.append(f"{reads} page reads in half a second with nothing new to read")
    assert not problems, "; ".join(problems)
