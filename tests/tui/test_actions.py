"""Pilot tests: every consent action, filters, details, reviews, the operator check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.message import Message
from textual.widgets import DataTable, Input, Static

from engine import Engine, World
from engine.app.replay import VirtualClock
from tests.conftest import polls
from tui.messages import EngineChanged
from tui.screens.arrow_log import ArrowLogScreen, parse_filter
from tui.screens.canvas import CanvasScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.detail import DetailScreen
from tui.screens.grants import GrantsScreen
from tui.screens.help import HelpScreen
from tui.screens.hold import HoldScreen
from tui.screens.holds import HoldsScreen
from tui.screens.review import ReviewScreen
from tui.widgets.log_view import LogView

from .conftest import armed, settle
from .world import make_app


def _static(app: Any, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_approve_a_hold_confirms_what_it_lets_through(tui_db: Path,
                                                            tui_clock: VirtualClock) -> None:
    """a shows the full prompt, shift+y approves it, and the header badge drops to 0."""
    # GIVEN the holds screen with yolo's held prompt
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.pending_holds == 1
        # WHEN a person presses a
        await pilot.press("a")
        await settle(pilot)
        # THEN the confirmation names card, arrow, agent and the whole text
        assert isinstance(app.screen, HoldScreen)
        assert "standup (acme.standup) over arrow e2" in _static(app, "#hold-about")
        assert "and redeploy to production." in _static(app, "#hold-text")
        await armed(pilot)
        await pilot.press("Y")
        await settle(pilot)
        held = [p for p in app.engine.prompts() if p.agent == "yolo"][0]
        assert held.state in ("queued", "delivered") and held.approver == "operator"
        assert app.pending_holds == 0
        assert "no holds" in str(app.screen.query_one("HoldBadge").render())


async def test_reject_and_cancel(tui_db: Path, tui_clock: VirtualClock) -> None:
    """n leaves the hold as it was; r then y rejects it (PROMPT_REJECTED)."""
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, HoldScreen)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, HoldsScreen)
        assert [p.state for p in app.engine.prompts(state="held")] == ["held"]
        await pilot.press("r", "y")
        await settle(pilot)
        yolo = [p for p in app.engine.prompts() if p.agent == "yolo"][0]
        assert (yolo.state, yolo.code) == ("rejected", "PROMPT_REJECTED")


async def test_operator_check_refusing_changes_nothing(tui_db: Path,
                                                       tui_clock: VirtualClock) -> None:
    """Without a person at a terminal, approving is refused with a visible reason."""
    app = make_app(tui_db, tui_clock, start="holds", operator_ok=False)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        assert "read-only: standard input is not a terminal" in _static(app, "#operator-banner")
        await pilot.press("a", "Y")
        await settle(pilot)
        assert [p.state for p in app.engine.prompts(state="held")] == ["held"]
        # A consent action reached another way (the palette) is refused and says why.
        prompt = app.engine.prompts(state="held")[0]
        done = await app.consent("hold: approve", lambda: app.engine.approve_hold(
            prompt.id, text_sha256=prompt.text_sha256))
        assert done is None
        await settle(pilot)
        assert [p.state for p in app.engine.prompts(state="held")] == ["held"]
        assert any("refused" in n.message and "not a terminal" in n.message
                   for n in app._notifications)


async def test_revoke_with_confirmation(tui_db: Path, tui_clock: VirtualClock) -> None:
    """v on a granted permission asks, then revokes it for every card of the package."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        packages = screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.standup"))
        await settle(pilot)
        perms = screen.query_one("#permissions", DataTable)
        perms.focus()
        perms.move_cursor(row=perms.get_row_index("terminals.write"))
        await pilot.press("v")
        await settle(pilot)
        assert "Revoke terminals.write from acme.standup" in _static(app, ".dialog-body")
        await pilot.press("y")
        await settle(pilot)
        assert "terminals.write" not in app.engine.state.grants["acme.standup"]
        decision = await app.engine.call("standup", "terminals.run", "shell", {"command": "ls"})
        assert decision.reason == "not-granted"


async def test_approving_an_update_shows_the_widening_first(tui_db: Path,
                                                            tui_clock: VirtualClock) -> None:
    """u on a pending package shows the diff; y approves that very hash."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        packages = app.screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.notes"))
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert "widened: +network" in _static(app, ".dialog-body")
        await pilot.press("y")
        await settle(pilot)
        assert not app.engine.state.packages["acme.notes"].is_pending


async def test_declining_an_update_keeps_the_approved_version(tui_db: Path,
                                                               tui_clock: VirtualClock) -> None:
    """d on an installed package with a pending version asks, then declines that version."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        approved = app.engine.state.packages["acme.notes"].hash
        packages = app.screen.query_one("#packages", DataTable)
        packages.move_cursor(row=packages.get_row_index("acme.notes"))
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        assert "Decline the pending version of acme.notes" in _static(app, ".dialog-body")
        await pilot.press("y")
        await settle(pilot)
        pkg = app.engine.state.packages["acme.notes"]
        assert not pkg.is_pending and pkg.hash == approved
        assert "network" not in app.engine.state.grants.get("acme.notes", set())


async def test_filter_and_bad_filter(tui_db: Path, tui_clock: VirtualClock) -> None:
    """outcome:denied shows only refusals; a filter that does not parse changes nothing."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(LogView)
        everything = view.count
        assert everything == len(app.engine.log_rows())
        await pilot.press("slash")
        await pilot.press(*"outcome:denied", "enter")
        await settle(pilot)
        assert view.count == len(app.engine.log_rows(outcome="denied")) == 1
        assert app.screen.query_one(LogView).row_at(0)["target"] == "codex"  # type: ignore[index]
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        assert not screen.apply_filter("colour:blue")
        assert "filter not applied" in _static(app, "#filter-status")
        assert view.count == 1
        assert screen.apply_filter("")
        await settle(pilot)
        assert view.count == everything


def test_filter_syntax() -> None:
    """Keys, relative times and ISO times parse; anything else names the word."""
    f = parse_filter("card:c1 call:agents.prompt since:10m until:2027-01-15T08:00", 1000.0)
    assert (f.card, f.call, f.since, f.until) == ("c1", "agents.prompt", 400.0, 1_800_000_000.0)
    for bad in ("colour:red", "since:yesterday"):
        try:
            parse_filter(bad, 0)
        except ValueError as exc:
            assert bad.split(":")[0] in str(exc)
        else:
            raise AssertionError(bad)


async def test_open_a_rows_detail(tui_db: Path, tui_clock: VirtualClock) -> None:
    """enter on a row shows its full payload, chain, reason and approver."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(LogView)
        target = next(r for r in app.engine.log_rows() if r["outcome"] == "held")
        view.cursor = target["seq"] - 1
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        text = _static(app, "#detail-text")
        assert "and redeploy to production." in text and "outcome:   held" in text
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ArrowLogScreen)


async def test_review_accept_and_decline(tui_db: Path, tui_clock: VirtualClock) -> None:
    """The review lists the permissions; n declines (recorded); a high-risk package installs
    with shift+y only."""
    app = make_app(tui_db, tui_clock, review="acme.reader")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        text = _static(app, "#review-text")
        assert "agents.output" in text and "It may ask later for" in text
        assert "read the screens and replies" in _static(app, "#review-reach")
        await pilot.press("n")
        await settle(pilot)
        assert not app.engine.state.packages["acme.reader"].installed
        assert app.engine.history.entries(package="acme.reader")[-1]["detail"] == "declined"
        app.push_screen(ReviewScreen("acme.reader"))
        await settle(pilot)
        await pilot.press("y")  # agents.output is high risk: y is not enough
        await settle(pilot)
        assert not app.engine.state.packages["acme.reader"].installed
        await pilot.press("Y")
        await settle(pilot)
        assert app.engine.state.packages["acme.reader"].installed
        assert app.engine.state.grants["acme.reader"] == {"agents.output"}


async def test_live_updates_from_another_process(tui_db: Path, tui_clock: VirtualClock) -> None:
    """A row logged by another engine on the same file appears without a key press."""
    msgs: list[Message] = []
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36), message_hook=msgs.append) as pilot:
        await settle(pilot)
        view = app.screen.query_one(LogView)
        before = view.count
        other = Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None))
        try:
            await other.call("standup", "agents.prompt", "codex", {"text": "still no arrow"})
        finally:
            other.close()
        for _ in polls():
            await pilot.pause(0.05)
            if view.count == before + 1:
                break
        await settle(pilot)
        assert view.count == before + 1
        assert view.cursor == view.count - 1  # the tail is followed
        assert any(isinstance(m, EngineChanged) and m.what == "store" for m in msgs)


async def test_palette_help_and_remapped_keys(tui_db: Path, tui_clock: VirtualClock) -> None:
    """hold.approve remapped to A works; help lists binding ids; the palette has commands."""
    app = make_app(tui_db, tui_clock, start="holds", keymap={"hold.approve": "A"})
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one(DataTable)
        ids = {str(table.get_cell_at((r, 2))) for r in range(table.row_count)}
        assert {"hold.approve", "hold.reject", "app.quit", "screen.log"} <= ids
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        assert isinstance(app.screen, HoldScreen)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"grant: revoke")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, (GrantsScreen, ConfirmScreen))
        assert app.current_mode == "grants"


async def test_canvas_shows_reach_and_preview(tui_db: Path, tui_clock: VirtualClock) -> None:
    """Selecting a node shows who reaches it; w previews a new arrow's reach."""
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CanvasScreen)
        assert screen.select_node("yolo")
        await settle(pilot)
        reach = _static(app, "#reach")
        assert "standup (acme.standup): standup -prompt-> yolo (arrow e2" in reach
        assert screen.select_node("jotter")
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        box = app.screen.query_one("#preview", Input)
        assert box.has_focus
        await pilot.press(*"yolo", "enter")
        await settle(pilot)
        assert "If you draw jotter → yolo:" in _static(app, "#reach")
        await pilot.press("l")
        await settle(pilot)
        assert app.current_mode == "log"
