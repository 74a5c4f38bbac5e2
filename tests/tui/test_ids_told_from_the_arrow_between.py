"""Where the TUI writes ``card → target`` on one line, a card's id cannot pass for two nodes.

A node id may hold spaces and arrows (only control characters, ``/`` and dot
segments are refused): a card named ``standup → claude`` calling ``yolo`` was
drawn ``standup → claude → yolo``, which reads as the card ``standup`` calling
``claude``. An id that holds what separates ids on such a line (a space, an
arrow, a comma, a parenthesis, a quote) is drawn quoted, its own quotes escaped.

(Found in round 20: the log view's "card → target" column, the row's detail and the
canvas's reach panel wrote the ids between the arrows as they are.)
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from engine.app.replay import VirtualClock
from tui import text
from tui.screens.canvas import CanvasScreen
from tui.screens.detail import describe_row
from tui.widgets.log_view import COLUMNS, format_row

from .conftest import settle
from .world import make_app, open_engine

ROW = {"seq": 6, "t": 1_800_000_000.0, "arrow": "e8", "card": "standup → claude",
       "package": "acme.standup", "target": "yolo", "call": "agents.prompt",
       "outcome": "queued", "payload": "hi"}


def test_ident_quotes_what_holds_a_separator() -> None:
    """A plain id is drawn as it is; one holding a separator quoted, its quotes escaped."""
    ident = text.ident
    assert ident("standup") == "standup"
    assert ident("n-2.x_y:z") == "n-2.x_y:z"
    assert ident("standup → claude") == '"standup → claude"'
    assert ident("a->b") == '"a->b"'
    assert ident("c1, jotter") == '"c1, jotter"'
    assert ident('say "hi"') == '"say \\"hi\\""'
    assert ident("x (acme.notes)") == '"x (acme.notes)"'
    assert "\n" not in ident("c1\nc2") and "\x1b" not in ident("a\x1b[2Jb")


def test_the_log_views_card_to_target_column() -> None:
    """The column shows the card's id quoted, then the arrow, then the target."""
    columns = tuple(c for c in COLUMNS if c.name == "card → target")
    wide = tuple(type(c)(c.name, 60) for c in columns)
    cell = format_row(ROW, wide)[0][0].rstrip()
    assert cell == '"standup → claude" → yolo', cell


def test_the_rows_detail() -> None:
    """The detail's call line names the card quoted."""
    shown = str(describe_row(ROW))
    assert 'card "standup → claude" (acme.standup) → yolo' in shown, shown


async def test_the_reach_panel(tui_db: Path, tui_clock: VirtualClock) -> None:
    """Who can reach a node names each card quoted when its id holds a separator."""
    engine = open_engine(tui_db, tui_clock)
    try:
        await engine.add_node({"id": "standup → claude", "type": "card",
                               "package": "acme.standup"}, workspace="w1")
        await engine.add_arrow({"id": "e8", "from": "standup → claude", "to": "yolo"})
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CanvasScreen)
        assert screen.select_node("yolo")
        await settle(pilot)
        lines = str(screen.query_one("#reach", Static).content).split("\n")
        assert any(line.startswith('  "standup → claude" (acme.standup): ') for line in lines), \
            lines


#: A card whose id reads as another card of another package over another arrow.
MIMIC = "x (acme.notes) over arrow e4"


async def _mimic_prompts(path: Path, clock: VirtualClock) -> None:
    """``MIMIC`` (of acme.standup) prompts the dangerous agent yolo: held."""
    engine = open_engine(path, clock)
    try:
        await engine.add_node({"id": MIMIC, "type": "card", "package": "acme.standup"},
                              workspace="w1")
        await engine.add_arrow({"id": "e8", "from": MIMIC, "to": "yolo"})
        decision = await engine.call(MIMIC, "agents.prompt", "yolo", {"text": "hello"})
        assert decision.outcome == "held", decision
    finally:
        engine.close()


async def test_the_held_prompts_card_and_the_prompts_screen(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """The holds screen and the prompts screen name the card quoted: one card, its package."""
    await _mimic_prompts(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#holds", DataTable)
        held = next(p for p in app.engine.prompts(state="held") if p.card == MIMIC)
        table.move_cursor(row=table.get_row_index(held.id))
        await settle(pilot)
        about = str(app.screen.query_one("#prompt-about", Static).content)
        assert f'from card "{MIMIC}" (acme.standup) over arrow e8' in about, about
        await pilot.press("5")
        await settle(pilot)
        table = app.screen.query_one("#prompts", DataTable)
        table.move_cursor(row=table.get_row_index(held.id))
        await settle(pilot)
        detail = str(app.screen.query_one("#prompt-detail", Static).content)
        assert f'from card "{MIMIC}" (acme.standup) to agent yolo' in detail, detail


def test_a_quoted_ids_control_characters_stay_marked() -> None:
    """Quoting keeps what `plain` promises: a control character is drawn as its symbol,
    styled, so a card cannot pass off a literal ``␛`` as an escape, quoted or not."""
    shown = text.plain(text.quoted("evil ;\x1b]0;t\x07"))
    assert shown.plain == '"evil ;␛]0;t␇"'
    assert [(s.start, s.end) for s in shown.spans] == [(7, 8), (12, 13)]
