"""The footer is rebuilt only when the keys it shows change, and measures a key's text once.

Rule (the footer runs on every change of the screen's bindings a person causes, with
each move of the focus): Textual's footer removed every key and mounted new ones on each
change, and the row's fit (`tui.widgets.key_footer`) rendered every key twice to measure
it (6 s of test_small.py's 35 s, profiled). Now a change that leaves
the keys as they were keeps them, and each key's text is measured once. What the row
shows is unchanged (test_the_footer_shows_help_at_80_columns).

(Round 36, helper tui36: the TUI tests' processor time.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.app.replay import VirtualClock
from tui.widgets.key_footer import FooterKey, KeyFooter

from .conftest import settle
from .screen import screen_output
from .world import make_app


def _keys(app: Any) -> list[FooterKey]:
    return list(app.screen.query_one(KeyFooter).query_children(FooterKey))


async def test_a_focus_move_that_keeps_the_keys_keeps_the_footer(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """On the canvas the node list and the arrows table have the same keys: moving the
    focus between them leaves the footer's keys (the same widgets) in place."""
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        before, line = _keys(app), screen_output(app)[0].splitlines()[-1]
        # WHEN the person moves the focus from the node list to the arrows table
        focused = app.focused
        app.screen.focus_next()
        await settle(pilot)
        assert app.focused is not focused
        # THEN the footer shows what it showed, with the keys it had
        assert screen_output(app)[0].splitlines()[-1] == line
        assert all(a is b for a, b in zip(_keys(app), before, strict=True))
    app.engine.close()


async def test_a_focus_move_that_changes_the_keys_rebuilds_the_footer(
        tui_db: Path, tui_clock: VirtualClock) -> None:
    """On the arrow log the filter box has keys of its own: the footer follows the focus
    there and back."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert screen_output(app)[0].splitlines()[-1].startswith(" ⏎ Detail ")
        for first in (" / Filter ", " ⏎ Detail ", " / Filter "):
            app.screen.focus_next()
            await settle(pilot)
            assert screen_output(app)[0].splitlines()[-1].startswith(first), first
    app.engine.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 30)])
async def test_fitting_the_row_again_renders_no_key(
        tui_db: Path, tui_clock: VirtualClock, monkeypatch: pytest.MonkeyPatch,
        size: tuple[int, int]) -> None:
    """Once the row is fitted, fitting it again (a resize does) keeps what it shows and
    renders no key to measure it: each key's text was measured once."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        footer = app.screen.query_one(KeyFooter)
        shown = [key.display for key in _keys(app)]
        rendered: list[FooterKey] = []
        render = FooterKey.render

        def counted(key: FooterKey) -> Any:
            rendered.append(key)
            return render(key)

        monkeypatch.setattr(FooterKey, "render", counted)
        # WHEN the row is fitted again, in the same width
        footer.fit()
        # THEN no key was rendered to measure it, and the same keys are shown
        assert rendered == []
        assert [key.display for key in _keys(app)] == shown
    app.engine.close()
