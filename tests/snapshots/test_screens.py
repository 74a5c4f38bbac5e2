"""Snapshots of each screen with a frozen clock (pytest-textual-snapshot): the original
screens at 100×30, the consent screens of issue 18 at 80×24 and 120×40."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from engine.app.replay import VirtualClock
from tui.screens.review import ReviewScreen

from ..tui.conftest import armed, settle
from ..tui.world import T0, add_hostile, build_sync, make_app

SIZE = (100, 30)


@pytest.fixture
def snap_db(tmp_path: Path) -> tuple[Path, VirtualClock]:
    """The shared canvas, built before the app's own event loop starts."""
    clock = VirtualClock(T0)
    path = tmp_path / "snap.db"
    # A fixed folder name: nothing on screen depends on tmp_path.
    build_sync(path, tmp_path / "ws", clock)
    return path, clock


async def _settled(pilot: Pilot[Any]) -> None:
    await settle(pilot)


def test_canvas_screen(snap_compare: Any, snap_db: tuple[Path, VirtualClock]) -> None:
    """Nodes by kind with status and dangerous mode; the first node's arrows and reach."""
    assert snap_compare(make_app(*snap_db), terminal_size=SIZE, run_before=_settled)


def test_arrow_log_screen(snap_compare: Any, snap_db: tuple[Path, VirtualClock]) -> None:
    """Every row, newest last, with the chain verified."""
    assert snap_compare(make_app(*snap_db, start="log"), terminal_size=SIZE,
                        run_before=_settled)


def test_holds_screen(snap_compare: Any, snap_db: tuple[Path, VirtualClock]) -> None:
    """The held prompt with its full text and time left; the header badge."""
    assert snap_compare(make_app(*snap_db, start="holds"), terminal_size=SIZE,
                        run_before=_settled)


def test_grants_screen(snap_compare: Any, snap_db: tuple[Path, VirtualClock]) -> None:
    """Packages with hash state, permissions by risk, the consent history."""
    assert snap_compare(make_app(*snap_db, start="grants"), terminal_size=SIZE,
                        run_before=_settled)


def test_review_screen(snap_compare: Any, snap_db: tuple[Path, VirtualClock]) -> None:
    """The install review of an offered package."""
    async def open_review(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.push_screen(ReviewScreen("acme.reader"))
        await settle(pilot)

    assert snap_compare(make_app(*snap_db), terminal_size=SIZE, run_before=open_review)


def test_read_only_banner(snap_compare: Any, snap_db: tuple[Path, VirtualClock]) -> None:
    """Without a person at the keyboard every screen says consent actions are refused."""
    assert snap_compare(make_app(*snap_db, start="holds", operator_ok=False),
                        terminal_size=SIZE, run_before=_settled)


# -- issue 18: the consent screens, at 80×24 and 120×40 ---------------------------
SIZES = [(80, 24), (120, 40)]


@pytest.fixture
def hostile_db(snap_db: tuple[Path, VirtualClock]) -> tuple[Path, VirtualClock]:
    """The shared canvas plus a hostile card's 61-line held prompt (markup, escapes)."""
    asyncio.run(add_hostile(*snap_db))
    return snap_db


async def _open_hostile_hold(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    table = pilot.app.screen.query_one("#holds", DataTable)
    table.move_cursor(row=table.row_count - 1)
    await pilot.press("a")
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_hold_dialog_before_the_end(snap_compare: Any, hostile_db: tuple[Path, VirtualClock],
                                    size: tuple[int, int]) -> None:
    """A long held prompt: its start, the risk, no approve key yet; card text inert."""
    assert snap_compare(make_app(*hostile_db, start="holds"), terminal_size=size,
                        run_before=_open_hostile_hold)


@pytest.mark.parametrize("size", SIZES)
def test_hold_dialog_at_the_end(snap_compare: Any, hostile_db: tuple[Path, VirtualClock],
                                size: tuple[int, int]) -> None:
    """Read through to the end: the last line and the approve key (shift+y)."""
    async def to_end(pilot: Pilot[Any]) -> None:
        await _open_hostile_hold(pilot)
        for _ in range(100):  # a page at a time: every line has been on screen
            if getattr(pilot.app.screen, "all_seen", True):
                break
            await pilot.press("pagedown")
            await settle(pilot)
        await armed(pilot)

    assert snap_compare(make_app(*hostile_db, start="holds"), terminal_size=size,
                        run_before=to_end)


@pytest.mark.parametrize("size", SIZES)
def test_holds_list_with_hostile_text(snap_compare: Any,
                                      hostile_db: tuple[Path, VirtualClock],
                                      size: tuple[int, int]) -> None:
    """The holds list and its scrollable lower pane with markup and escapes shown inert."""
    async def select(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        table = pilot.app.screen.query_one("#holds", DataTable)
        table.move_cursor(row=table.row_count - 1)
        await settle(pilot)

    assert snap_compare(make_app(*hostile_db, start="holds"), terminal_size=size,
                        run_before=select)


@pytest.mark.parametrize("size", SIZES)
def test_update_diff_dialog(snap_compare: Any, snap_db: tuple[Path, VirtualClock],
                            size: tuple[int, int]) -> None:
    """Approving an update: each widened permission with its Users see text and hosts."""
    async def open_diff(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        table = pilot.app.screen.query_one("#packages", DataTable)
        table.move_cursor(row=table.get_row_index("acme.notes"))
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)

    assert snap_compare(make_app(*snap_db, start="grants"), terminal_size=size,
                        run_before=open_diff)


@pytest.mark.parametrize("size", SIZES)
def test_high_risk_review(snap_compare: Any, snap_db: tuple[Path, VirtualClock],
                          size: tuple[int, int]) -> None:
    """A high-risk install names the risk and asks for shift+y."""
    async def open_review(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.push_screen(ReviewScreen("acme.reader"))
        await settle(pilot)

    assert snap_compare(make_app(*snap_db), terminal_size=size, run_before=open_review)


@pytest.mark.parametrize("size", SIZES)
def test_read_only_holds(snap_compare: Any, snap_db: tuple[Path, VirtualClock],
                         size: tuple[int, int]) -> None:
    """Read-only: the banner, and no approve or reject key in the footer."""
    assert snap_compare(make_app(*snap_db, start="holds", operator_ok=False),
                        terminal_size=size, run_before=_settled)


@pytest.mark.parametrize("size", SIZES)
def test_prompts_screen(snap_compare: Any, snap_db: tuple[Path, VirtualClock],
                        size: tuple[int, int]) -> None:
    """Every prompt with its state; the selected one's text and reply."""
    assert snap_compare(make_app(*snap_db, start="prompts"), terminal_size=size,
                        run_before=_settled)


@pytest.mark.parametrize("size", SIZES)
def test_canvas_with_hostile_nodes(snap_compare: Any, hostile_db: tuple[Path, VirtualClock],
                                   size: tuple[int, int]) -> None:
    """The virtual node list with its header; hostile names inert; the reach panel."""
    async def select(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.screen.select_node("yolo")  # type: ignore[attr-defined]
        await pilot.pause(0.3)  # the reach waits for the cursor to rest
        await settle(pilot)

    assert snap_compare(make_app(*hostile_db), terminal_size=size, run_before=select)


@pytest.mark.parametrize("size", SIZES)
def test_arrow_log_narrow(snap_compare: Any, snap_db: tuple[Path, VirtualClock],
                          size: tuple[int, int]) -> None:
    """The log's header row and responsive columns at 80 and 120 columns."""
    assert snap_compare(make_app(*snap_db, start="log"), terminal_size=size,
                        run_before=_settled)


@pytest.mark.parametrize("size", SIZES)
def test_canvas_map(snap_compare: Any, snap_db: tuple[Path, VirtualClock],
                    size: tuple[int, int]) -> None:
    """The map of the canvas around yolo: boxes, arrows, dangerous mode, reach lit."""
    async def open_map(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.screen.select_node("yolo")  # type: ignore[attr-defined]
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)

    assert snap_compare(make_app(*snap_db), terminal_size=size, run_before=open_map)


@pytest.mark.parametrize("size", SIZES)
def test_remove_offered_package_dialog(snap_compare: Any, snap_db: tuple[Path, VirtualClock],
                                       size: tuple[int, int]) -> None:
    """Removing an offered package names it, its version and content hash, and what stays."""
    async def open_remove(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        table = pilot.app.screen.query_one("#packages", DataTable)
        table.move_cursor(row=table.get_row_index("acme.reader"))
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)

    assert snap_compare(make_app(*snap_db, start="grants"), terminal_size=size,
                        run_before=open_remove)
