"""The rows a scroll animation flies past are not counted as seen: only where the view
comes to rest is on screen long enough to be read.

(Found in round 24: `end` was bound to jump without animating, but `home` was left to
the scroll view, which animates back to the top through every row in a blink: ``end``
then ``home`` counted the whole text as seen, and the yes worked on a diff whose
middle was never on screen. So did the view's own animated ``end`` once a person
remapped ``confirm.end`` to another key.)

SPEC §7, §4.4: a consent dialog's yes works only once all of what it consents to has
been on screen (`tui.screens.seen`).
"""

from __future__ import annotations

from textual.app import App

from tui.screens.confirm import ConfirmScreen

from .conftest import settle

BODY = "\n".join(f"host h{n}.example.com" for n in range(80))


class _Host(App[None]):
    def on_mount(self) -> None:
        self.push_screen(ConfirmScreen("Approve the update?", BODY, verb="approve"),
                         self._answered)

    def _answered(self, answer: bool | None) -> None:
        self.answer = answer


async def test_end_then_home_does_not_count_the_middle() -> None:
    app = _Host()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        for key in ("end", "home"):
            await pilot.press(key)
            await settle(pilot)
        assert dialog.query_one("#confirm-scroll").scroll_y == 0  # back at the top
        assert not dialog.all_seen
        await pilot.press("y")
        await settle(pilot)
        assert app.screen is dialog and not hasattr(app, "answer")


async def test_the_scroll_view_s_own_end_counts_only_where_it_stops() -> None:
    app = _Host()
    async with app.run_test(size=(80, 24)) as pilot:
        # The person gave the dialog's jump another key: end is the view's own again.
        app.set_keymap({"confirm.end": "ctrl+e"})
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        await pilot.press("end")
        await settle(pilot)
        assert dialog.query_one("#confirm-scroll").is_vertical_scroll_end
        assert not dialog.all_seen
        # Read through a page at a time, it is seen.
        for _ in range(20):
            await pilot.press("pageup")
            await settle(pilot)
        for _ in range(20):
            await pilot.press("pagedown")
            await settle(pilot)
        assert dialog.all_seen
