"""What counts as seen of a dialog's text is what was on screen as the text is laid out
now: a resize that reflows it (another width) starts the count afresh.

(Found in round 24: the rows seen were kept as row numbers of the text's old layout. At a
narrow width the first 40 rows are a few lines of the text; widened, the same numbers
cover many more of its lines, so a person who had read the start, then widened the
terminal, could say yes to lines that were never on screen.)

SPEC §7, §4.4: a consent dialog's yes works only once all of what it consents to has
been on screen (`tui.screens.seen`).
"""

from __future__ import annotations

import re

from textual.app import App

from tui.screens.confirm import ConfirmScreen

from .conftest import settle
from .screen import screen_output

LINES = 80
BODY = "\n".join(f"S{n:02d} " + "word " * 40 + f"E{n:02d}" for n in range(LINES))


class _Host(App[None]):
    def on_mount(self) -> None:
        self.push_screen(ConfirmScreen("Grant it?", BODY, verb="grant"))


def _shown(app: App[None], seen: set[str]) -> None:
    seen.update(re.findall(r"[SE]\d\d", screen_output(app)[0]))


async def test_widening_after_reading_the_start_does_not_count_the_rest_as_seen() -> None:
    app = _Host()
    seen: set[str] = set()
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and not dialog.all_seen
        _shown(app, seen)
        for _ in range(3):  # the start of the text, a few lines of it at this width
            await pilot.press("pagedown")
            await settle(pilot)
            _shown(app, seen)
        assert not dialog.all_seen
        # WHEN the terminal is widened: each line of the text now takes one row
        await pilot.resize_terminal(240, 24)
        await settle(pilot)
        _shown(app, seen)
        # THEN only what was on screen counts: the dialog is read through, or not yet
        every = {f"{k}{n:02d}" for k in "SE" for n in range(LINES)}
        assert not dialog.all_seen or every <= seen, sorted(every - seen)
        # and reading it through as it is laid out now gets there: up a page at a
        # time to its top, then down to its end
        scroll = dialog.query_one("#confirm-scroll")
        while scroll.scroll_y > 0:
            await pilot.press("pageup")
            await settle(pilot)
            _shown(app, seen)
        for _ in range(40):
            if dialog.all_seen:
                break
            await pilot.press("pagedown")
            await settle(pilot)
            _shown(app, seen)
        assert dialog.all_seen and every <= seen, sorted(every - seen)
