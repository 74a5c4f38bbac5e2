"""A log with a row removed by hand: the row acted on is the row drawn, and the gap is shown.

Without a filter the log view takes a row's position for ``seq - 1``
(`Positions.seq_at`). A row deleted by hand — what `log verify` reports, and
what a person then opens the log to look at — leaves a position with no row:
the view files each row read at the position of its own sequence number
(`log_view.filed`), draws the empty position as "no row N in the log", and
enter, ``c`` and ``p`` act on the row drawn under the cursor. Nothing is read
again and again for the missing row.

(Found by a helper: `LogView._loaded` filed a page's rows by offset, so each row
after the gap was drawn a line early while enter and ``c`` acted on another, and
the last position re-requested its page on every frame — a busy loop.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.detail import DetailScreen
from tui.widgets.log_view import LogView

from .conftest import settle
from .screen import screen_output
from .world import make_app


async def test_enter_opens_the_row_drawn_under_the_cursor_past_a_gap(tui_db: Path,
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


async def test_the_missing_row_is_drawn_as_missing(tui_db: Path, tui_clock: VirtualClock) -> None:
    conn = sqlite3.connect(tui_db)
    conn.execute("delete from log where seq = 2")
    conn.commit()
    conn.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(140, 30), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        view = screen.query_one(LogView)
        assert "no row 2 in the log" in screen_output(app)[0]
        assert view.row_at(1) is None and view.row_at(0) is not None
        view.cursor, view.follow = 1, False
        await settle(pilot)
        await pilot.press("enter")
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, ArrowLogScreen)  # no detail of another row
        told = [n.message for n in app._notifications]  # noqa: SLF001
        assert sum("no row 2 in the log" in m for m in told) == 2, told
        assert app._exception is None  # noqa: SLF001
