"""When the arrow under the canvas's arrows table cursor is removed, the cursor stays near
it (the next arrow, the previous one at the end) and the person is told which arrow went
and which the cursor is on now.

Rule (as the node list's, round 33: a key meant for one row never acts unseen on
another): the arrows table moved its cursor to its first row, saying nothing, so ``l``
(the selected arrow's log), pressed by a person who had chosen an arrow another program
then removed, opened the log of an arrow they never chose.

(Left by helper tui33 in round 33; fixed by helper tui33b.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.canvas import CanvasScreen

from .conftest import settle
from .world import make_app, open_engine


async def _remove_under_the_cursor(store: Path, clock: VirtualClock, chosen: str,
                                   removed: str, node: str = "standup"
                                   ) -> tuple[str | None, list[str], dict[str, Any]]:
    """On ``node``'s arrows (standup's: e1, e2, e3), put the cursor on ``chosen``, remove
    ``removed`` from another program; return the arrow under the cursor then, the messages
    shown and the filters of the log ``l`` opens."""
    app = make_app(store, clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CanvasScreen)
        assert screen.select_node(node)
        await settle(pilot)
        table = screen.query_one("#arrows", DataTable)
        assert [str(k.value) for k in table.rows] == \
            (["e1", "e2", "e3"] if node == "standup" else ["e4"])
        table.focus()
        table.move_cursor(row=table.get_row_index(chosen))
        await settle(pilot)
        # WHEN another program removes the arrow
        other = open_engine(store, clock)
        try:
            await other.remove_arrow(removed)
        finally:
            other.close()
        # Until the table has redrawn (the app may read the store a look before the
        # screen hears of it, `ArrowgateApp.watch_store`).
        for _ in polls():
            await pilot.pause(0.05)
            if removed not in [str(k.value) for k in table.rows]:
                break
        await settle(pilot)
        arrow = screen.selected_arrow()
        said = [n.message for n in app._notifications]
        opened: list[dict[str, Any]] = []
        app.open_log = lambda **filters: opened.append(filters)  # type: ignore[method-assign]
        await pilot.press("l")
        await settle(pilot)
    app.engine.close()
    return (arrow.id if arrow is not None else None), said, opened[0]


@pytest.mark.parametrize(("chosen", "now"), [("e2", "e3"), ("e3", "e2")],
                         ids=["the-next-arrow", "the-previous-at-the-end"])
async def test_the_cursor_stays_near_and_it_is_said(tui_db: Path, tui_clock: VirtualClock,
                                                    chosen: str, now: str) -> None:
    """THEN the cursor is on the arrow after it (before it, at the end), a message names
    both, and ``l`` opens the log of the arrow named."""
    selected, said, opened = await _remove_under_the_cursor(tui_db, tui_clock, chosen, chosen)
    assert selected == now
    assert any(f"arrow {chosen} (standup → " in m and "is no longer on the canvas" in m
               and f"moved to arrow {now} (standup → " in m for m in said), said
    assert opened == {"arrow": now}


async def test_another_arrow_removed_moves_nothing(tui_db: Path,
                                                   tui_clock: VirtualClock) -> None:
    """An arrow removed elsewhere in the table leaves the cursor on its arrow, unsaid."""
    selected, said, opened = await _remove_under_the_cursor(tui_db, tui_clock, "e3", "e1")
    assert selected == "e3"
    assert not any("is no longer on the canvas" in m for m in said), said
    assert opened == {"arrow": "e3"}


async def test_the_last_arrow_removed_is_said(tui_db: Path, tui_clock: VirtualClock) -> None:
    """jotter's only arrow removed: the message says none is left, and ``l`` opens the
    card's log, not an arrow's."""
    selected, said, opened = await _remove_under_the_cursor(tui_db, tui_clock, "e4", "e4",
                                                            node="jotter")
    assert selected is None
    assert any("arrow e4 (jotter → notes) is no longer on the canvas" in m
               and "node jotter has no arrow left" in m for m in said), said
    assert opened == {"card": "jotter"}
