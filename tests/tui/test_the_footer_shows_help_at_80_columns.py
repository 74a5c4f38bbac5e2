"""At 80 columns every screen's footer shows ``? Help`` and the screen's first keys, whole.

Rule (SPEC §10: the TUI is where a person gives consent; a person must see how to get
help): Textual's footer lists the screen's keys, then the app's, and cuts the row at the
terminal's edge. At 80 columns the canvas's and the arrow log's own keys filled it, and
on the other screens the row was cut before ``5 Prompts`` and in the middle of
``? Help``: a person on an 80-column terminal never saw how to get help. Now the help key
follows the screen's keys and is always shown; keys that do not fit whole are left out
(the help and the palette list them), none cut at the edge. At 120 columns every key of
each screen is shown, as before.

(Left by round 32's closing note; fixed by helper tui33 in round 33.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.replay import VirtualClock
from tui.screens.canvas import CanvasScreen
from tui.widgets.key_footer import FooterKey, KeyFooter

from .conftest import settle
from .screen import screen_output
from .world import make_app

MODES = ("canvas", "log", "holds", "grants", "prompts")
#: The key each screen's row must start with at 80 columns, with a person operating it.
FIRST = {"canvas": "o Answer request", "log": "⏎ Detail", "holds": "a Approve…",
         "grants": "v Revoke", "prompts": "l Arrow log"}


def _footer(app) -> tuple[str, list[FooterKey], FooterKey]:
    """The footer's line on screen, its keys shown (in order) and the palette's key."""
    footer = app.screen.query_one(KeyFooter)
    keys = [k for k in footer.query_children(FooterKey) if k.display]
    palette = next(k for k in keys if k.has_class("-command-palette"))
    return screen_output(app)[0].splitlines()[-1], \
        [k for k in keys if k is not palette], palette


@pytest.mark.parametrize("operator_ok", [True, False])
async def test_help_is_shown_whole_on_every_screen_at_80_columns(
        tui_db: Path, tui_clock: VirtualClock, operator_ok: bool) -> None:
    """At 80×24, with or without a person operating the app, each screen's footer shows
    ``? Help`` and only whole keys, before the palette's key."""
    app = make_app(tui_db, tui_clock, operator_ok=operator_ok)
    async with app.run_test(size=(80, 24)) as pilot:
        for mode in MODES:
            # WHEN the person opens each screen on an 80-column terminal
            app.switch_mode(mode)
            await settle(pilot)
            line, keys, palette = _footer(app)
            # THEN the footer shows how to get help
            assert "? Help" in line, (mode, line)
            assert any(k.has_class("-help") for k in keys), mode
            # AND every key shown ends before the palette's key: none is cut at the edge
            assert all(k.region.right <= palette.region.x for k in keys), (mode, line)
            if operator_ok:
                # AND the screen's first key (its consent key, where it has one) is first
                assert line.startswith(f" {FIRST[mode]} "), (mode, line)
    app.engine.close()


async def test_every_key_is_shown_at_120_columns(tui_db: Path,
                                                 tui_clock: VirtualClock) -> None:
    """At 120×40 each screen shows all of its own keys and the help key, and the holds
    and prompts screens every screen's key too, as before."""
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        for mode in MODES:
            app.switch_mode(mode)
            await settle(pilot)
            line, keys, palette = _footer(app)
            own = [b.description for _ns, b, _on, _tip in app.screen.active_bindings.values()
                   if b.show and _ns is not app]
            assert own and all(f" {d} " in line for d in own), (mode, own, line)
            assert "? Help" in line, (mode, line)
            assert all(k.region.right <= palette.region.x for k in keys), (mode, line)
            if mode in ("holds", "prompts"):
                assert all(f"{n} " in line for n in ("1 Canvas", "2 Arrow log", "3 Holds",
                                                     "4 Grants", "5 Prompts")), line
    app.engine.close()


async def test_the_help_key_follows_the_keymap(tui_db: Path, tui_clock: VirtualClock) -> None:
    """The help key moved by the keymap is the one shown, and still always."""
    app = make_app(tui_db, tui_clock, keymap={"app.help": "f2"})
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, CanvasScreen)
        line, _keys, _palette = _footer(app)
        assert "f2 Help" in line and "? Help" not in line, line
        await pilot.press("f2")
        await settle(pilot)
        assert type(app.screen).__name__ == "HelpScreen"
    app.engine.close()
