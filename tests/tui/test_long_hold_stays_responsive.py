"""A held prompt of 10,000 lines can be read to its end: every key is answered at once.

A card may write a prompt of up to ``max_payload`` (256 KiB): 10,000 short
lines. The person must scroll through all of it to approve it, within the hold
timeout, so the holds screen and the dialog must not redraw the whole text on
each clock tick or key: the time left is redrawn on its own, the text only when
another prompt is shown.

(Found in round 19: with such a prompt each page-down took about four seconds,
as the holds screen under the dialog re-rendered the whole text every second;
reading it to the end took longer than the hold lasts.)
"""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import DataTable, Static

from engine.app.replay import VirtualClock
from tui.screens.hold import HoldScreen

from .conftest import open_hold, settle
from .world import add_hostile, make_app

TEXT = "\n".join(f"line {n}: tidy up" for n in range(10_000)) + "\nTHE LAST LINE"


async def test_the_text_is_not_redrawn_each_second(tui_db: Path,
                                                   tui_clock: VirtualClock) -> None:
    held = await add_hostile(tui_db, tui_clock, text=TEXT)
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#holds", DataTable)
        table.move_cursor(row=table.get_row_index(held))
        await settle(pilot)
        pane = app.screen.query_one("#prompt-text", Static)
        updates: list[object] = []
        original = pane.update
        pane.update = lambda *a, **k: (updates.append(a), original(*a, **k))[1]  # type: ignore[method-assign]
        await pilot.pause(2.5)  # two ticks of the time left
        assert updates == [], f"the whole text was redrawn {len(updates)} times"


async def _ten_page_downs(path: Path, clock: VirtualClock, text: str) -> float:
    """Seconds that 10 page-downs take in the dialog of a held prompt of ``text``."""
    held = await add_hostile(path, clock, text=text)
    app = make_app(path, clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_hold(pilot, held)
        assert isinstance(dialog, HoldScreen)
        start = time.perf_counter()
        for _ in range(10):
            await pilot.press("pagedown")
        await settle(pilot)
        return time.perf_counter() - start


async def test_page_down_through_a_long_prompt_is_as_quick_as_a_short_one(
        tmp_path: Path, tui_clock: VirtualClock) -> None:
    """Measured against the same keys on a 300-line prompt (the scroll animates: even that
    takes seconds), so a loaded machine slows both alike."""
    from .world import build

    times = []
    for name, text in (("short", "\n".join(f"line {n}" for n in range(300))), ("long", TEXT)):
        path = tmp_path / f"{name}.db"
        await build(path, tmp_path / name, tui_clock)
        times.append(await _ten_page_downs(path, tui_clock, text))
    short, long = times
    assert long < 2.5 * short + 1.0, f"10 page-downs: {long:.1f} s, on a short prompt {short:.1f} s"
