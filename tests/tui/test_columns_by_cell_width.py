"""Columns line up in terminal cells, whatever a card or a node is named.

Each column of the arrow log, the node list and each box of the canvas map is
cut and padded by the cells a terminal draws (Rich's ``cell_len``), not by
characters: an East Asian wide character takes two cells and a combining mark
none. A denied row's call and target are whatever the card sent, so counted in
characters a card could move every column after them, and a person would read
the card's own text ("approved") under the "outcome" heading instead of the
row's outcome ("denied").

(Found by a helper: `format_row`, the node list and the map cut and padded by
``len``.)
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest
from rich.cells import cell_len

from engine.app.replay import VirtualClock
from tui.screens.map import draw_map
from tui.text import fit
from tui.widgets.log_view import COLUMNS, format_row

from .conftest import settle
from .screen import screen_output
from .world import make_app, open_engine

FORGED_CALL = "中中中中中中中中approved"  # an unknown call: denied, logged as sent


def _cells(line: str, start: int, end: int) -> str:
    """The characters of ``line`` drawn in cells [start, end)."""
    out, x = [], 0
    for ch in line:
        if start <= x < end:
            out.append(ch)
        x += cell_len(ch)
    return "".join(out)


def test_each_log_column_takes_its_width_in_cells() -> None:
    row = {"seq": 6, "t": 0, "arrow": "e1", "card": "standup", "target": "claude\u0301\u0301",
           "call": FORGED_CALL, "outcome": "denied", "code": "UNKNOWN_CALL", "payload": "x"}
    pieces = format_row(row, COLUMNS)
    for (text, _style), column in zip(pieces, COLUMNS, strict=True):
        if column.width:
            assert cell_len(text) == column.width, (column.name, text)


async def test_a_card_cannot_write_under_the_outcome_heading(tui_db: Path,
                                                             tui_clock: VirtualClock) -> None:
    engine = open_engine(tui_db, tui_clock)
    try:
        decision = await engine.call("standup", FORGED_CALL, "claude\u4e2d", {})
        assert decision.outcome == "denied"
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        lines = screen_output(app)[0].splitlines()
        header = next(line for line in lines if line.startswith("seq "))
        start = cell_len(header[:header.index("outcome")])
        row = next(line for line in lines if "UNKNOWN_CALL" in line)
        under_outcome = _cells(row, start, start + 13).strip()
        assert under_outcome == "denied", f"under 'outcome' the person reads {under_outcome!r}"


@pytest.mark.parametrize("text", ["short", "中中中中中中中中中中", "claude\u0301\u0301 and more text",
                                  "a中", "中a中a中a中a"])
@pytest.mark.parametrize("width", [1, 2, 3, 7, 8, 30])
def test_a_cell_is_cut_and_padded_to_its_width_in_cells(text: str, width: int) -> None:
    cell = fit(text, width)
    assert cell_len(cell) == width, (text, width, cell)
    assert cell.rstrip() == text or "…" in cell


def test_each_map_line_is_the_maps_width_in_cells() -> None:
    graph = nx.Graph()
    graph.add_edge("中中中中中中中中中中", "clau\u0301de")
    graph.add_edge("clau\u0301de", "x")
    graph.add_edge("x", "中a")
    drawn = draw_map(graph, 60, 8, selected="x", lit=set(), dangerous={"中a"})
    lines = drawn.plain.split("\n")
    assert [cell_len(line) for line in lines] == [60] * 8
    assert any("[clau\u0301de]" in line for line in lines)
