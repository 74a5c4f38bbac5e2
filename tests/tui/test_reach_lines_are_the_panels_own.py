"""The canvas screen's reach panel: each line is the panel's own, whatever a node id holds.

The panel is drawn over several lines ("Who can reach shell:", then a line a
card). A node id stored before ids were checked for control characters (round
15, `engine.core.text.id_problem`) may still hold a line break; written into
the panel as it is, the rest of the id became a line of the card's making,
drawn like the panel's own (a card that reaches nothing, or another card).

(Found in round 20: `CanvasScreen` drew the panel with ``plain(..., multiline=True)``
and put the card's and the node's ids into it raw, so a line break in an id was a
real one.)
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from textual.widgets import Static

from engine import file_digests
from engine.app.replay import VirtualClock
from tui.screens.canvas import CanvasScreen

from .conftest import settle
from .world import make_app, open_engine

#: What the id's second line says: the line a person would read as the panel's own.
FORGED = "  nobody else (acme.notes): nothing"
CARD = "c1\n" + FORGED


async def _old_card(path: Path, clock: VirtualClock) -> None:
    """A card whose id holds a line break, as a database written before round 15 holds."""
    engine = open_engine(path, clock)
    try:
        with mock.patch("engine.services.nodes.id_problem", lambda _kind, _value: None):
            await engine.add_node({"id": CARD, "type": "card", "package": "acme.standup"},
                                  workspace="w1")
        await engine.add_arrow({"id": "e7", "from": CARD, "to": "shell"})
    finally:
        engine.close()


def _panel_lines(app: object) -> list[str]:
    reach = app.screen.query_one("#reach", Static)  # type: ignore[attr-defined]
    return str(reach.content).split("\n")


async def test_a_line_break_in_a_reaching_cards_id_adds_no_line(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """Who can reach a node: each card that can is one line, its whole id on it."""
    await _old_card(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CanvasScreen)
        assert screen.select_node("shell")
        await settle(pilot)
        lines = _panel_lines(app)
        assert lines[0] == "Who can reach shell:", lines
        assert not any(line.startswith(FORGED) for line in lines), lines
        assert any("c1" in line and "nobody else" in line for line in lines), lines


async def test_a_line_break_in_the_selected_cards_id_adds_no_line(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """What a card can reach, and who can reach it: its id is one line in the headings."""
    await _old_card(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CanvasScreen)
        assert screen.select_node(CARD)
        await settle(pilot)
        lines = _panel_lines(app)
        assert lines[0].startswith("What ") and "c1" in lines[0] and "nobody else" in lines[0], \
            lines
        assert not any(line.startswith(FORGED) for line in lines), lines


async def test_a_line_break_in_an_agents_id_adds_no_line_to_the_install_review(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """The install review's "could reach once wired" names each dangerous agent on its line."""
    forged = "  nothing on any canvas"
    engine = open_engine(tui_db, tui_clock)
    try:
        with mock.patch("engine.services.nodes.id_problem", lambda _kind, _value: None):
            await engine.add_node({"id": "bad\n" + forged, "type": "agent", "dangerous": True},
                                  workspace="w1")
        raw = {"name": "acme.asker", "version": "1.0.0", "permissions": {"agents.prompt": {}}}
        await engine.offer("acme.asker", raw, file_digests({"index.js": "// asker"}))
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, review="acme.asker")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        lines = str(app.screen.query_one("#review-reach", Static).content).split("\n")
        assert forged not in lines, lines
        assert any("dangerous mode" in line and "bad" in line and "nothing on any canvas" in line
                   for line in lines), lines
