"""`arrowgate tui --store postgresql://…`: the TUI on the shared store (issue 20).

The engine runs on PostgreSQL, the log screen reads the ``log`` table through
`engine.store.pg.logindex.PGLogIndex`, holds are answered through the engine,
and another engine's rows appear live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from engine import Engine, World
from engine.app.replay import VirtualClock
from engine.store.logindex import LogFilter
from engine.store.pg.logindex import PGLogIndex
from tests.conftest import polls
from tui.screens.arrow_log import ArrowLogScreen
from tui.screens.hold import HoldScreen
from tui.widgets.log_view import LogView

from .conftest import armed, settle
from .screen import screen_output
from .world import build, make_app


@pytest.fixture
async def tui_store(pg_dsn: str, tmp_path: Path, tui_clock: VirtualClock) -> str:
    """The store of `world.build`, on the test's PostgreSQL database."""
    await build(pg_dsn, tmp_path / "ws", tui_clock)
    return pg_dsn


async def _until(pilot: Any, check: Any, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.1)):
        await settle(pilot)
        if check():
            return
        await pilot.pause(0.1)
    raise AssertionError("the screen did not show it in time")


async def test_log_holds_and_live_rows_on_postgresql(tui_store: str,
                                                     tui_clock: VirtualClock) -> None:
    """The log shows the store's rows, a hold is approved, and another engine's refusal
    appears on the log screen without a restart."""
    app = make_app(tui_store, tui_clock, start="log")
    assert app.db_path == tui_store and app.anchor_path is not None
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        view = screen.query_one(LogView)
        assert isinstance(view.index, PGLogIndex)
        text = screen_output(app)[0]
        assert "no arrow here" in text and "denied" in text and "held" in text
        await _until(pilot, lambda: "verified" in str(screen.query_one("#verify",
                                                                       Static).render()))
        assert "and the anchor" in str(screen.query_one("#verify", Static).render())
        # A hold answered in the TUI, on the shared store.
        assert app.pending_holds == 1
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, HoldScreen)
        await armed(pilot)
        await pilot.press("Y")
        await settle(pilot)
        held = [p for p in app.engine.prompts() if p.agent == "yolo"][0]
        assert held.approver == "operator" and app.pending_holds == 0
        # Another engine (another process, as far as the store knows) logs a refusal.
        other = Engine.open(store=tui_store, clock=tui_clock, world=World(net=None, fs=None))
        try:
            await other.call("standup", "agents.prompt", "codex", {"text": "from elsewhere"})
        finally:
            other.close()
        await pilot.press("2")
        await settle(pilot)
        log_screen = app.screen
        assert isinstance(log_screen, ArrowLogScreen)
        await _until(pilot, lambda: "from elsewhere" in screen_output(app)[0])
        assert "approved" in screen_output(app)[0]
    app.engine.close()
    await _feed_stopped()


async def _feed_stopped() -> None:
    """Wait for the engine's change-feed thread to close its connection (it looks for the
    stop every 2.5 s)."""
    import asyncio
    import threading

    for _ in polls():
        if not any(t.name == "arrowgate-pg-changes" for t in threading.enumerate()):
            return
        await asyncio.sleep(0.1)


def test_pg_log_index_pages_filters_and_timeline(pg_dsn: str, tmp_path: Path,
                                                 tui_clock: VirtualClock) -> None:
    """The PostgreSQL reader gives what `LogIndex` gives on the same rows."""
    import asyncio

    from engine.store.logindex import LogIndex

    asyncio.run(build(pg_dsn, tmp_path / "ws", tui_clock))
    asyncio.run(build(tmp_path / "same.db", tmp_path / "ws2", tui_clock))
    for log_filter in (LogFilter(), LogFilter(outcome="denied"), LogFilter(text="PRODUCTION"),
                       LogFilter(card="standup", since=0.0, until=4e9)):
        pg, lite = PGLogIndex(pg_dsn, log_filter), LogIndex(tmp_path / "same.db", log_filter)
        try:
            assert pg.refresh() == lite.refresh() > 0
            keep = ("seq", "outcome", "payload", "card", "chain")
            assert [{k: r[k] for k in keep} for r in pg.page(0, pg.count)] == \
                [{k: r[k] for k in keep} for r in lite.page(0, lite.count)]
            row = pg.row(pg.seq_at(0))
            assert row is not None and row["seq"] == pg.seq_at(0)
            assert pg.timeline(7)[2] == lite.timeline(7)[2]
        finally:
            pg.close()
            lite.close()
