"""Every key typed after the key that opens a text box goes to the box, however fast:
the arrow log's filter (``/``), the canvas's search (``/``) and its wiring preview (``w``).

Rule (SPEC §4.5, README "The TUI"): a key acts only on what the person meant it for. A
person types ``/`` and then their filter in one go; read by the terminal in one burst, the
keys after ``/`` must not reach the rows as their keys (``q`` quits, ``x`` exports, ``1``
switches screen, ``o`` opens a card's permission request), and none acts in between.

(Found by helper tui29 in round 29 and left: Textual moves the focus after the keys that
wait, so the whole burst went to the rows.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.canvas import CanvasScreen

from .conftest import settle
from .world import make_app

#: A key's name as Textual's driver gives it, for the characters these tests type.
_NAMES = {"/": "slash", ":": "colon", " ": "space", ".": "full_stop", "-": "minus"}


async def _burst(pilot: Any, text: str) -> None:
    """``text`` as one read of the terminal: every key posted before any is handled."""
    for char in text:
        pilot.app.post_message(events.Key(_NAMES.get(char, char), char))
    await settle(pilot)


async def test_a_filter_typed_at_once_after_slash_is_the_filters(
        tui_db: Path, tui_clock: VirtualClock, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``/`` then ``card:standup x 1 q`` in one burst: all of it in the filter, none a key
    of the rows (no export, no copy, no other screen, no quit)."""
    monkeypatch.chdir(tmp_path)  # where x would export
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        # WHEN the person types / and a filter faster than the app handles keys
        await _burst(pilot, "/card:standup cpx 1 q")
        # THEN every key after / is in the filter, which has the focus
        box = screen.query_one("#filter", Input)
        assert box.value == "card:standup cpx 1 q"
        assert app.focused is box
        # AND no key acted on the rows or the app
        assert app.is_running and app.screen is screen
        assert not [n.message for n in app._notifications]
        assert not [f for f in os.listdir(tmp_path) if f.endswith(".jsonl")]
        # AND the filter still takes / when it has the focus (a path, a URL)
        await _burst(pilot, "/")
        assert box.value == "card:standup cpx 1 q/"


@pytest.mark.parametrize(("opens", "box_id"), [("/", "#node-search"), ("w", "#preview")])
async def test_a_node_id_typed_at_once_after_the_canvas_opens_a_box_is_the_boxs(
        tui_db: Path, tui_clock: VirtualClock, opens: str, box_id: str) -> None:
    """On the canvas, ``/`` (search) or ``w`` (wire preview) then ``yolo`` in one burst:
    all of it in the box; ``o`` opens no permission request, ``l`` no log."""
    app = make_app(tui_db, tui_clock, start="canvas")
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CanvasScreen)
        assert screen.select_node("standup")
        await settle(pilot)
        # WHEN the person opens the box and types a node id faster than the app handles keys
        await _burst(pilot, f"{opens}yolo")
        # THEN every key after the first is in the box, which has the focus
        box = screen.query_one(box_id, Input)
        assert box.value == "yolo"
        assert app.focused is box
        # AND none acted on the canvas: no dialog, no other screen, nothing said
        assert app.screen is screen
        assert not [n.message for n in app._notifications]
        # AND in the box, the keys that open boxes are its text
        await _burst(pilot, "/w")
        assert box.value == "yolo/w" and app.focused is box
