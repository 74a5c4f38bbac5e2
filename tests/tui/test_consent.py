"""Consent a person can see whole (issue 18 items 1-6): inert text, the whole
prompt before approval, the full update diff, deliberate keys, read-only mode."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.widgets import DataTable, Static

from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.detail import DetailScreen
from tui.screens.grants import GrantsScreen
from tui.screens.hold import HoldScreen
from tui.screens.holds import HoldsScreen
from tui.screens.review import ReviewScreen
from tui.text import plain, visible
from tui.widgets.log_view import LogView

from .conftest import open_hold, settle
from .screen import screen_output
from .world import HOSTILE_CARD, LONG_TEXT, add_hostile, make_app


@pytest.fixture
async def hostile(tui_db: Path, tui_clock: VirtualClock) -> str:
    """The world plus a hostile card and agent; the id of the hostile held prompt."""
    return await add_hostile(tui_db, tui_clock)


def _assert_inert(app: Any, *must_show: str) -> None:
    """Markup shows as typed, escapes as symbols, and no escape reaches the terminal."""
    text, raw = screen_output(app)
    for piece in must_show:
        assert piece in text, (piece, text)
    assert "\x1b[2J" not in raw and "\x1b]0;" not in raw and "\x07" not in raw
    assert "\x1b" not in text


def test_visible_makes_every_control_character_visible() -> None:
    """C0, DEL, C1, bidi overrides and lone surrogates become symbols; text stays text."""
    assert visible("a\x1b[2Jb") == "a␛[2Jb"
    assert visible("\x1b]0;title\x07") == "␛]0;title␇"
    assert visible("x\ry\x7f\x9b") == "x␍y␡⟨U+009B⟩"
    assert visible("abc\u202edef") == "abc⟨U+202E⟩def"
    assert visible("\udc80") == "⟨U+DC80⟩"
    assert visible("one\ntwo") == "one␊two"
    assert visible("one\ntwo\tthree", multiline=True) == "one\ntwo\tthree"
    assert visible("[red]x[/red] 👨\u200d👩") == "[red]x[/red] 👨\u200d👩"
    text = plain("a\x1bb [/bold]")
    assert isinstance(text, Text) and text.plain == "a␛b [/bold]"
    assert [(s.start, s.end) for s in text.spans] == [(1, 2)]  # the symbol is styled


async def test_card_text_is_inert_in_the_holds_list_and_dialog(
        tui_db: Path, tui_clock: VirtualClock, hostile: str) -> None:
    """Markup and escapes in a card's id, an agent's name and the prompt show as text."""
    # GIVEN a held prompt from a card named with markup, to an agent named with escapes
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#holds", DataTable)
        table.move_cursor(row=table.get_row_index(hostile))
        await settle(pilot)
        # THEN the list and the lower pane show them as typed, nothing reaches the terminal
        _assert_inert(app, "evil[red]x[/red]␛]0;title␇", "please fix [/bold] in the docs",
                      "[red]x[/red] ␛[2J␛]0;title␇")
        # WHEN the dialog opens
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, HoldScreen)
        _assert_inert(app, "bot[/bold]␛[2J", "line 1: please fix [/bold] in the docs [red]x[/red]")


async def test_card_text_is_inert_in_the_log_and_its_detail(
        tui_db: Path, tui_clock: VirtualClock, hostile: str) -> None:
    """The log's rows and a row's detail show the hostile card and prompt inert."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(LogView)
        seq = next(r["seq"] for r in app.engine.log_rows() if r["card"] == HOSTILE_CARD
                   and r["outcome"] == "held")
        view.cursor = seq - 1
        await settle(pilot)
        _assert_inert(app, "evil[red]x[/red]␛]0;", "line 1: please fix [/bold]")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        _assert_inert(app, "line 1: please fix [/bold] in the docs [red]x[/red] ␛[2J")
        # A filter typed with markup is an error shown as text, not a crash.
        await pilot.press("escape")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        assert not screen.apply_filter("outcome:[/bold]")
        await settle(pilot)
        assert "[/bold]" in str(screen.query_one("#filter-status", Static).render())


async def test_card_text_is_inert_in_grants_and_review(
        tui_db: Path, tui_clock: VirtualClock, hostile: str) -> None:
    """The consent history names the hostile card; the review lists the hostile agent."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        packages = app.screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.standup"))
        await settle(pilot)
        _assert_inert(app, "card:evil[red]x[/red]␛]0;title␇")
        app.push_screen(ReviewScreen("acme.prompter"))
        await settle(pilot)
        _assert_inert(app, "bot[/bold]␛[2J")


async def test_whole_prompt_before_approval(tui_db: Path, tui_clock: VirtualClock,
                                            hostile: str) -> None:
    """A 61-line prompt: no approve key until its end was on screen; then shift+y approves
    with the digest of the very text shown."""
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_hold(pilot, hostile)
        assert isinstance(dialog, HoldScreen)
        assert "RISK" in str(dialog.query_one("#hold-risk", Static).render())
        # WHEN the person presses the approve keys before scrolling
        await pilot.press("Y", "y")
        await settle(pilot)
        # THEN nothing is approved and the key is not offered
        assert not dialog.all_seen and not app.active_bindings.get("Y")
        assert app.engine.prompt(hostile).state == "held"  # type: ignore[union-attr]
        assert "Scroll through to the end" in str(dialog.query_one("#hold-keys", Static).render())
        # WHEN the person scrolls down a screenful at a time to the end
        presses = 0
        while not dialog.all_seen and presses < 100:
            await pilot.press("pagedown")
            await settle(pilot)
            presses += 1
        assert dialog.all_seen and presses > 3
        assert "THE LAST LINE" in screen_output(app)[0]
        assert "Y" in app.active_bindings
        await pilot.press("Y")
        await settle(pilot)
        prompt = app.engine.prompt(hostile)
        assert prompt is not None and prompt.state in ("queued", "delivered")
        assert dialog.shown_sha256 == hashlib.sha256(LONG_TEXT.encode()).hexdigest()
        assert isinstance(app.screen, HoldsScreen)


async def test_approval_names_the_text_shown(tui_db: Path, tui_clock: VirtualClock,
                                             hostile: str) -> None:
    """Text changed after the dialog rendered it: the approval is refused as stale."""
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        dialog = await open_hold(pilot, hostile)
        assert isinstance(dialog, HoldScreen)
        for _ in range(100):  # read it through
            if dialog.all_seen:
                break
            await pilot.press("pagedown")
            await settle(pilot)
        assert dialog.all_seen
        # The engine's prompt now says something else than the dialog rendered.
        held = app.engine.state.prompts[hostile]
        held.text = held.text + "\nand one line more"
        await pilot.press("Y")
        await settle(pilot)
        assert app.engine.prompt(hostile).state == "held"  # type: ignore[union-attr]
        assert any("stale" in n.message for n in app._notifications)


async def test_reject_from_the_dialog(tui_db: Path, tui_clock: VirtualClock) -> None:
    """r opens the prompt; y rejects it without scrolling (saying no fails closed)."""
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, HoldScreen)
        await pilot.press("Y")  # the approve key does nothing in a rejection
        await settle(pilot)
        assert [p.state for p in app.engine.prompts(state="held")] == ["held"]
        await pilot.press("y")
        await settle(pilot)
        yolo = [p for p in app.engine.prompts() if p.agent == "yolo"][0]
        assert (yolo.state, yolo.code) == ("rejected", "PROMPT_REJECTED")


async def test_update_approval_shows_the_whole_diff(tui_db: Path,
                                                    tui_clock: VirtualClock) -> None:
    """u lists each widened permission with its "Users see" text and each new host."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        packages = app.screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.notes"))
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        body = str(app.screen.query_one(".dialog-body", Static).render())
        assert "widened: +network (medium risk)" in body
        assert "Connect to api.example.com." in body
        assert "Users see: Send and receive data from these internet addresses only." in body
        assert "host pattern: api.example.com" in body


async def test_high_risk_update_needs_the_deliberate_key(tui_db: Path,
                                                         tui_clock: VirtualClock) -> None:
    """A widening to a high-risk permission names the risk; y does nothing, shift+y approves."""
    from engine import Engine, World

    engine = Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None))
    await engine.update("acme.notes", manifest={
        "name": "acme.notes", "version": "1.2.0",
        "permissions": {"cards.connected": {}, "fs.write": {}}})
    engine.close()
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        packages = app.screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.notes"))
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "fs.write" in str(app.screen.query_one("#confirm-risk", Static).render())
        await pilot.press("y")
        await settle(pilot)
        assert app.engine.state.packages["acme.notes"].is_pending
        await pilot.press("Y")
        await settle(pilot)
        assert not app.engine.state.packages["acme.notes"].is_pending
        assert "fs.write" in app.engine.state.grants["acme.notes"]


async def test_high_risk_install_needs_the_deliberate_key(tui_db: Path,
                                                          tui_clock: VirtualClock) -> None:
    """i then y does not install a high-risk package; the review names the risk; Y does."""
    await add_hostile(tui_db, tui_clock, text="short")
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        packages = app.screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.prompter"))
        await settle(pilot)
        await pilot.press("i", "y")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert not app.engine.state.packages["acme.prompter"].installed
        assert "agents.prompt" in str(app.screen.query_one("#review-risk", Static).render())
        await pilot.press("Y")
        await settle(pilot)
        assert app.engine.state.packages["acme.prompter"].installed


async def test_read_only_hides_and_disables_consent_keys(tui_db: Path,
                                                         tui_clock: VirtualClock) -> None:
    """With the operator check refused no consent dialog opens, no key is shown, q quits."""
    app = make_app(tui_db, tui_clock, start="holds", operator_ok=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HoldsScreen)
        shown = {b.binding.action for b in app.active_bindings.values()}
        assert "approve" not in shown and "reject" not in shown
        footer = screen_output(app)[0].splitlines()[-1]
        assert "Approve" not in footer and "Reject" not in footer
        await pilot.press("a", "r", "enter")
        await settle(pilot)
        assert isinstance(app.screen, HoldsScreen)
        await pilot.press("4")
        await settle(pilot)
        grants = app.screen
        assert isinstance(grants, GrantsScreen)
        await pilot.press("u", "i", "v")
        await settle(pilot)
        assert app.screen is grants
        packages = grants.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.reader"))
        await pilot.press("d", "y")
        await settle(pilot)
        assert app.screen is grants and "acme.reader" in app.engine.state.packages
        app.push_screen(ReviewScreen("acme.reader"))
        await settle(pilot)
        await pilot.press("y", "Y", "n")
        await settle(pilot)
        assert not app.engine.state.packages["acme.reader"].installed
        assert not any(e["action"] == "install"  # neither accepted nor declined
                       for e in app.engine.history.entries(package="acme.reader"))
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("q")
        await settle(pilot)
    assert app.return_code == 0


async def test_ctrl_c_quits(tui_db: Path, tui_clock: VirtualClock) -> None:
    """ctrl+c quits from anywhere, even with the filter box focused."""
    app = make_app(tui_db, tui_clock, start="log", operator_ok=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "q")
        await settle(pilot)
        assert app.is_running  # q in a text box is a letter
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert not app.is_running


