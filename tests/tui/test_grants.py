"""Requests and grants (issue 18 item 14): answer a card's request, grant an optional
permission, re-grant after a revoke."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from engine import Engine, World
from engine.app.replay import VirtualClock
from tui.screens.confirm import ConfirmScreen
from tui.screens.request import RequestScreen

from .conftest import settle
from .world import make_app


async def _with_reader_card(path: Path, clock: VirtualClock, *, visible: bool = True) -> None:
    engine = Engine.open(path, clock=clock, world=World(net=None, fs=None))
    try:
        await engine.install("acme.reader")
        await engine.add_node({"id": "reader1", "type": "card", "package": "acme.reader",
                               "visible": visible}, workspace="w1")
        await engine.revoke("acme.standup", "terminals.write")
    finally:
        engine.close()


def _select(app: object, table_id: str, key: str) -> None:
    table = app.screen.query_one(table_id, DataTable)  # type: ignore[attr-defined]
    table.focus()
    table.move_cursor(row=table.get_row_index(key))


async def test_regrant_after_revoke_needs_the_deliberate_key(tui_db: Path,
                                                             tui_clock: VirtualClock) -> None:
    """g on a revoked high-risk permission names the risk; y does nothing, shift+y grants."""
    await _with_reader_card(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        _select(app, "#packages", "acme.standup")
        await settle(pilot)
        _select(app, "#permissions", "terminals.write")
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen) and app.screen.risk is not None
        await pilot.press("y")
        await settle(pilot)
        assert "terminals.write" not in app.engine.state.grants["acme.standup"]
        await pilot.press("Y")
        await settle(pilot)
        assert "terminals.write" in app.engine.state.grants["acme.standup"]
        assert app.engine.history.entries(package="acme.standup")[-1]["action"] == "grant"


async def test_grant_an_optional_permission(tui_db: Path, tui_clock: VirtualClock) -> None:
    """g on an optional low-risk permission asks, then y grants it to the package."""
    await _with_reader_card(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        _select(app, "#packages", "acme.reader")
        await settle(pilot)
        _select(app, "#permissions", "clipboard.write")
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert app.engine.state.grants["acme.reader"] == {"agents.output", "clipboard.write"}


async def test_answer_a_cards_request(tui_db: Path, tui_clock: VirtualClock) -> None:
    """o on a card lists its optional permissions; n denies (recorded), y allows."""
    await _with_reader_card(tui_db, tui_clock)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.screen.select_node("reader1")  # type: ignore[attr-defined]
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, RequestScreen)
        await pilot.press("n")
        await settle(pilot)
        last = app.engine.history.entries(package="acme.reader")[-1]
        assert (last["action"], last["detail"]) == ("request", "deny")
        assert "clipboard.write" not in app.engine.state.grants["acme.reader"]
        await pilot.press("o")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert "clipboard.write" in app.engine.state.grants["acme.reader"]


async def test_a_hidden_cards_request_is_refused(tui_db: Path, tui_clock: VirtualClock) -> None:
    """A card not on screen may not ask (not-visible): the refusal is shown, nothing changes."""
    await _with_reader_card(tui_db, tui_clock, visible=False)
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        assert app.screen.select_node("reader1")  # type: ignore[attr-defined]
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)  # the dialog takes its yes once it has been on screen a moment
        await pilot.press("y")
        await settle(pilot)
        assert "clipboard.write" not in app.engine.state.grants["acme.reader"]
        assert any("not-visible" in n.message for n in app._notifications)


async def test_remove_an_offered_package(tui_db: Path, tui_clock: VirtualClock) -> None:
    """d on an offered package asks (naming its hash); n keeps it, y removes it (item 10)."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        offered_hash = app.engine.state.packages["acme.reader"].hash
        _select(app, "#packages", "acme.reader")
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert offered_hash in str(app.screen.query_one(".dialog-body").render())
        await pilot.press("n")
        await settle(pilot)
        assert "acme.reader" in app.engine.state.packages
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert "acme.reader" not in app.engine.state.packages
        assert "acme.reader" not in app.screen.query_one("#packages", DataTable).rows
        last = app.engine.history.entries(package="acme.reader")[-1]
        assert (last["action"], last["subject"]["hash"]) == ("package.remove", offered_hash)
        assert any("acme.reader removed" in n.message for n in app._notifications)


async def test_an_installed_package_is_not_removed(tui_db: Path, tui_clock: VirtualClock) -> None:
    """d on an installed package opens no dialog and says to revoke instead."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        _select(app, "#packages", "acme.standup")
        await settle(pilot)
        await pilot.press("d", "y")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert app.engine.state.packages["acme.standup"].installed
        assert any("only an offered package" in n.message for n in app._notifications)
        assert not any(e["action"] == "package.remove"
                       for e in app.engine.history.entries(package="acme.standup"))
