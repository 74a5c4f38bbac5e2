"""The smaller ones (issue 18 item 10)."""

from __future__ import annotations

import os
from pathlib import Path

from textual.widgets import DataTable, Static

from engine import Verification
from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.grants import GrantsScreen
from tui.screens.review import ReviewScreen
from tui.widgets.log_view import LogView

from .conftest import settle
from .world import make_app


async def test_time_left_moves(tui_db: Path, tui_clock: VirtualClock) -> None:
    """The holds pane's time left follows the clock."""
    app = make_app(tui_db, tui_clock, start="holds")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        pane = app.screen.query_one("#prompt-about", Static)
        assert "time left: 5:00" in str(pane.render())
        tui_clock.t += 61
        app.screen._tick()  # type: ignore[attr-defined]  # what the 1 s timer calls
        await settle(pilot)
        assert "time left: 3:59" in str(pane.render())


async def test_verify_label_claims_no_missing_anchor(tui_db: Path,
                                                     tui_clock: VirtualClock) -> None:
    """Without an anchor file the label does not say the anchor was verified."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        assert "and the anchor" in str(screen.query_one("#verify", Static).render())
        os.remove(f"{tui_db}.anchor")
        screen._verified(Verification(True, 6, None, ""))
        label = str(screen.query_one("#verify", Static).render())
        assert "and the anchor" not in label and "no anchor file" in label


async def test_a_review_that_fails_offers_no_accept(tui_db: Path,
                                                    tui_clock: VirtualClock) -> None:
    """A package that cannot be reviewed shows why and offers neither y, Y nor n."""
    app = make_app(tui_db, tui_clock, review="acme.missing")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert "cannot be installed" in str(app.screen.query_one("#review-text").render())
        shown = {b.binding.action for b in app.active_bindings.values()}
        assert not shown & {"accept", "accept_high", "decline"}


async def test_keymap_unknown_ids_and_clashes_are_named(tui_db: Path,
                                                        tui_clock: VirtualClock) -> None:
    """An unknown binding id and two bindings on one key are warnings, not silence."""
    app = make_app(tui_db, tui_clock, start="holds",
                   keymap={"hold.aprove": "A", "hold.approve": "r"})
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("hold.aprove" in m for m in messages), messages
        assert any("share a key" in m and "hold.approve" in m and "hold.reject" in m
                   for m in messages), messages


async def test_revoke_needs_the_permissions_table_focused(tui_db: Path,
                                                          tui_clock: VirtualClock) -> None:
    """v with the packages table focused revokes nothing; it moves to the permissions."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        packages = screen.query_one("#packages", DataTable)
        packages.focus()
        packages.move_cursor(row=packages.get_row_index("acme.standup"))
        await settle(pilot)
        await pilot.press("v", "y")
        await settle(pilot)
        assert app.screen is screen
        assert app.engine.state.grants["acme.standup"] == {"agents.prompt", "terminals.write",
                                                           "agents.output"}
        assert screen.query_one("#permissions", DataTable).has_focus


async def test_history_reads_as_words(tui_db: Path, tui_clock: VirtualClock) -> None:
    """The consent history lists granted permissions as words and a decline as declined."""
    app = make_app(tui_db, tui_clock, start="grants")
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await app.engine.install("acme.reader", accept=False)
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        packages = screen.query_one("#packages", DataTable)
        for name, expect in (("acme.standup", "agents.output, agents.prompt"),
                             ("acme.reader", "declined")):
            packages.move_cursor(row=packages.get_row_index(name))
            await settle(pilot)
            history = screen.query_one("#history", DataTable)
            cells = [str(c) for r in range(history.row_count) for c in history.get_row_at(r)]
            assert any(expect in c for c in cells), cells
            assert not any("[" in c for c in cells), cells


async def test_l_on_a_terminal_opens_every_row_to_it(tui_db: Path,
                                                     tui_clock: VirtualClock) -> None:
    """l on a terminal shows every row whose target it is, not just its first arrow's."""
    app = make_app(tui_db, tui_clock)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.screen.select_node("shell")  # type: ignore[attr-defined]
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        assert app.current_mode == "log"
        view = app.screen.query_one(LogView)
        assert view.count == len([r for r in app.engine.log_rows() if r["target"] == "shell"])
        assert view.index.filter.target == "shell"


async def test_palette_shows_each_commands_key(tui_db: Path, tui_clock: VirtualClock) -> None:
    """A palette hit names the key that runs it, remapped keys included (item 15)."""
    from tui.commands import ArrowgateCommands

    app = make_app(tui_db, tui_clock, start="holds", keymap={"hold.approve": "A"})
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        provider = ArrowgateCommands(app.screen)
        helps = {str(hit.text): hit.help async for hit in provider.discover()}
        assert helps["hold: approve"].endswith("key A")
        assert helps["screen: holds"].endswith("key 3")
        assert helps["grant: revoke"].endswith("key v")
