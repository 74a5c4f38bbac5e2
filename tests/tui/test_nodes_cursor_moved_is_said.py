"""When the node under the canvas's cursor is removed, the cursor stays near it (the next
node, the previous one at the end) and the person is told which node went and where the
cursor is now.

Rule (as the holds and grants screens', rounds 19 and 32: a key meant for one row never
acts unseen on another): the node list put the cursor back on its first node, saying
nothing, so ``o`` (answer a card's request), pressed by a person who had chosen a node
another program then removed, acted on the canvas's first node, which they never chose.

(Left by round 32's closing note; fixed by helper tui33 in round 33.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.canvas import CanvasScreen
from tui.widgets.node_list import NodeList

from .conftest import settle
from .world import make_app, open_engine

#: The shared canvas's nodes as the list sorts them: agents, terminals, cards, notes.
ORDER = ["claude", "codex", "yolo", "shell", "jotter", "standup", "notes"]


async def _remove_under_the_cursor(store: Path, clock: VirtualClock, chosen: str,
                                   removed: str) -> tuple[str | None, list[str]]:
    """Put the cursor on ``chosen``, remove ``removed`` from another program; return the
    node under the cursor then and the messages shown."""
    app = make_app(store, clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CanvasScreen)
        assert screen.query_one(NodeList).shown == ORDER
        assert screen.select_node(chosen)
        await settle(pilot)
        # WHEN another program removes the node
        other = open_engine(store, clock)
        try:
            await other.remove_node(removed)
        finally:
            other.close()
        # Until the list has redrawn (the app may read the store a look before the
        # screen hears of it, `ArrowgateApp.watch_store`).
        for _ in polls():
            await pilot.pause(0.05)
            if removed not in screen.query_one(NodeList).shown:
                break
        await settle(pilot)
        node = screen.selected_node()
        said = [n.message for n in app._notifications]
    app.engine.close()
    return (node.id if node is not None else None), said


@pytest.mark.parametrize(("chosen", "now"), [("shell", "jotter"), ("notes", "standup")],
                         ids=["the-next-node", "the-previous-at-the-end"])
async def test_the_cursor_stays_near_and_it_is_said(tui_db: Path, tui_clock: VirtualClock,
                                                    chosen: str, now: str) -> None:
    """THEN the cursor is on the node after it (before it, at the end), and a message
    names both."""
    selected, said = await _remove_under_the_cursor(tui_db, tui_clock, chosen, chosen)
    assert selected == now
    assert any(f"node {chosen} is no longer on the canvas" in m and f"node {now}" in m
               for m in said), said


async def test_another_node_removed_moves_nothing(tui_db: Path,
                                                  tui_clock: VirtualClock) -> None:
    """A node removed elsewhere in the list leaves the cursor on its node, unsaid."""
    selected, said = await _remove_under_the_cursor(tui_db, tui_clock, "standup", "codex")
    assert selected == "standup"
    assert not any("no longer on the canvas" in m for m in said), said
