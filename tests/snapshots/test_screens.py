"""Snapshots of each screen at 100×30 with a frozen clock (pytest-textual-snapshot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from engine.replay import VirtualClock
from tui.screens.review import ReviewScreen

from ..tui.conftest import settle
from ..tui.world import T0, build_sync, make_app

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
