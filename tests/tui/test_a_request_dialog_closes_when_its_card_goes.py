"""A card's request dialog closes, saying why, once its card is removed elsewhere or its
package is at another version than the one it shows: its allow key is never left
offered for a question that is gone.

Rule (SPEC §4.2: the card is told the answer, and must be on screen; §4.5: a person
consents to what they were shown): the dialog followed the package's grants, not its
card nor its version. Seen in tmux: the card removed by another program, the dialog
stayed, saying "Allowing it grants it to every card of acme.reader …: reader on w1" of
a card no longer there, its "y allow" offered; pressed, the engine refused an answer
for an unknown card. A version approved elsewhere left the old version's text under
the allow key (the answer then refused as ``stale``).

(Found by helper tui34 in round 34, in tmux.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.widgets import Static

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.screens.request import RequestScreen

from .conftest import DialogClock, _settle
from .test_answers_bind_to_the_version_shown import READER_1_1
from .test_the_request_dialog_says_the_grant_now import _open, _reader
from .world import make_app, open_engine


async def _remove_card(other: Engine) -> None:
    await other.remove_node("reader1")


async def _approve_a_version(other: Engine) -> None:
    update = await other.update("acme.reader", manifest=READER_1_1)
    await other.approve("acme.reader", review_hash=update.pending_hash)


@pytest.mark.parametrize(("act", "said"), [
    (_remove_card, "card reader1 was removed from its canvas"),
    (_approve_a_version, "acme.reader is at another version now"),
])
async def test_the_dialog_closes_and_says_why(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock,
        act: Callable[[Engine], Awaitable[None]], said: str) -> None:
    await _reader(tui_db, tui_clock, granted=False)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        dialog = await _open(pilot, app)
        dialog_clock.arm()
        assert dialog.armed and dialog.all_seen
        # WHEN another program removes the card, or approves another version
        other = open_engine(tui_db, tui_clock)
        try:
            await act(other)
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if app.screen is not dialog:
                break
        await _settle(pilot)
        # THEN the dialog is closed, and the person is told why
        assert not isinstance(app.screen, RequestScreen), app.screen
        messages = [n.message for n in app._notifications]
        assert any(said in m and "the request was not answered" in m
                   for m in messages), messages
        # AND the key that allowed there allows nothing
        await pilot.press("y")
        await _settle(pilot)
        assert "clipboard.write" not in app.engine.state.grants["acme.reader"]
    app.engine.close()


async def test_a_card_added_elsewhere_is_named_and_the_allow_waits(
        tui_db: Path, tui_clock: VirtualClock, dialog_clock: DialogClock) -> None:
    """The text names every card an allow grants to (the grant is the package's). A card
    of the package added elsewhere while the dialog was open was not named, and the
    allow granted to it too: now the text is said anew and read anew, a message says
    why, and the allow waits."""
    await _reader(tui_db, tui_clock, granted=False)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        dialog = await _open(pilot, app)
        dialog_clock.arm()
        assert dialog.armed and dialog.all_seen
        text = dialog.query_one("#request-text", Static)
        assert "reader2" not in str(text.render())
        # WHEN another program adds a card of the same package
        other = open_engine(tui_db, tui_clock)
        try:
            await other.add_node({"id": "reader2", "type": "card", "package": "acme.reader",
                                  "visible": True}, workspace="w1")
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if "reader2" in str(text.render()):
                break
        await _settle(pilot)
        # THEN the text names it, the person is told, and an allow at once grants nothing
        assert "reader2 on w1" in str(text.render()), str(text.render())
        messages = [n.message for n in app._notifications]
        assert any("the cards an allow of clipboard.write grants to changed" in m
                   for m in messages), messages
        assert not dialog.armed
        await pilot.press("y")
        await _settle(pilot)
        assert app.screen is dialog
        assert "clipboard.write" not in app.engine.state.grants["acme.reader"]
        # AND read again, the allow grants it
        dialog_clock.arm()
        await _settle(pilot)
        assert dialog.all_seen
        await pilot.press("y")
        await _settle(pilot)
        assert "clipboard.write" in app.engine.state.grants["acme.reader"]
    app.engine.close()
