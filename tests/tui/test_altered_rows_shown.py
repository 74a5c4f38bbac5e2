"""A log row altered by hand is drawn, opened and copied with its damage named, never a traceback.

engine/store/decoding.py: "A reader must then still show every row, that one
included, so that whoever runs verify can look at what it names". In the TUI
(`tui.rows.readable`) a field holding what the engine never writes — a time
that is not a number, a BLOB where text belongs — is shown empty and flagged,
its stored value kept under ``unreadable`` and shown in the row's detail.

(Found by a helper: ``float(row["t"])`` in the log view's `format_row` and
``json.dumps`` of a BLOB payload in the row detail ended the app.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tui.rows import readable
from tui.screens.arrow_log import ArrowLogScreen
from tui.widgets.log_view import LogView

from .conftest import settle
from .screen import screen_output
from .world import make_app


@pytest.mark.parametrize(("column", "value", "stored"), [
    ("t", "garbage", "garbage"), ("payload", b"\x00\xff", "b'\\x00\\xff'"),
    ("t", 1e300, "1e+300"), ("call", b"agents.prompt", "b'agents.prompt'"),
], ids=["time-not-a-number", "payload-a-blob", "time-past-any-calendar", "call-a-blob"])
async def test_an_altered_row_is_shown_not_a_crash(tui_db: Path, tui_clock: VirtualClock,
                                                   column: str, value: object,
                                                   stored: str) -> None:
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
        shown = screen_output(app)[0]
        assert "row 2" in shown
        assert "UNREADABLE" in shown and f"{column}: {stored}" in shown, shown
        await pilot.press("escape")
        await pilot.press("c")  # copy the row as JSON
        await pilot.press("p")  # copy its payload
        await settle(pilot)
        told = [n.message for n in app._notifications]  # noqa: SLF001
        if column == "payload":
            assert any("payload is unreadable" in m for m in told), told
    assert app._exception is None, app._exception  # noqa: SLF001


def test_readable_flags_what_the_engine_never_writes() -> None:
    row = {"seq": 3, "t": "garbage", "payload": b"\x00", "card": "c1", "payload_bytes": "9",
           "unreadable": {"chain": "[1"}}
    shown = readable(row)
    assert shown["t"] is None and shown["payload"] is None and shown["payload_bytes"] is None
    assert shown["card"] == "c1"
    assert shown["unreadable"] == {"chain": "[1", "t": "garbage", "payload": "b'\\x00'",
                                   "payload_bytes": "9"}
    assert row["unreadable"] == {"chain": "[1"}  # the reader's row is left as it was
