"""The arrow log's columns line up in cells, whatever a card names its call or target.

(t17) `format_row` cuts and pads each column by ``len`` — characters — while a
terminal draws East Asian wide characters in two cells and combining marks in
none. A denied row's call and target are whatever the card sent, so a card can
move every column after them: under the "outcome" heading a person then reads
the card's own text ("approved") instead of the row's outcome ("denied").
"""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len

from engine.app.replay import VirtualClock
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


def test_each_column_takes_its_width_in_cells() -> None:
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
