"""The arrow log's columns and filters (issue 18 item 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from engine import Engine, World
from engine.app.replay import VirtualClock
from tui.screens.arrow_log import ArrowLogScreen, parse_filter
from tui.widgets.log_view import LogView, columns_for

from .conftest import settle
from .screen import screen_output
from .world import make_app


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_outcome_and_payload_stay_at_narrow_widths(tui_db: Path, tui_clock: VirtualClock,
                                                         size: tuple[int, int]) -> None:
    """A header row names the columns; outcome, date and payload are on screen at 80 and 120."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        text = screen_output(app)[0]
        header = next(line for line in text.splitlines() if "time (UTC)" in line)
        assert "outcome" in header and "payload" in header
        assert "01-15 08:00:05" in text and "denied" in text and "no arrow here" in text


async def test_scroll_right_to_the_end_of_a_payload(tui_db: Path,
                                                    tui_clock: VirtualClock) -> None:
    """right scrolls the rows and the header together to a payload's end."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "redeploy to production." not in screen_output(app)[0]
        view = app.screen.query_one(LogView)
        for _ in range(40):
            await pilot.press("right")
        await settle(pilot)
        assert view.scroll_offset.x > 0
        assert "redeploy to production." in screen_output(app)[0]
        assert not str(app.screen.query_one("#log-header", Static).render()).startswith("seq")


async def test_zero_rows_unknown_values_target_and_free_text(tui_db: Path,
                                                             tui_clock: VirtualClock) -> None:
    """A filter matching nothing says 0 rows; an unknown outcome is an error; target: and
    free text filter."""
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        view = screen.query_one(LogView)
        status = screen.query_one("#filter-status", Static)
        assert screen.apply_filter("outcome:expired")
        await settle(pilot)
        assert view.count == 0 and "0 rows" in str(status.render())
        assert "0 rows match this filter." in screen_output(app)[0]
        assert not screen.apply_filter("outcome:sucess")
        assert "no outcome 'sucess'" in str(status.render())
        assert screen.apply_filter("target:shell")
        await settle(pilot)
        assert view.count == 1 and view.row_at(0)["call"] == "terminals.run"  # type: ignore[index]
        assert screen.apply_filter("REDEPLOY")
        await settle(pilot)
        assert view.count == 1 and view.row_at(0)["target"] == "yolo"  # type: ignore[index]


def test_filter_errors_name_the_problem() -> None:
    """since after until, a key twice, an empty value and an unknown key are errors."""
    with pytest.raises(ValueError, match="since: is after until:"):
        parse_filter("since:2027-01-02 until:2027-01-01", 0)
    with pytest.raises(ValueError, match="given twice"):
        parse_filter("card:a card:b", 0)
    with pytest.raises(ValueError, match="needs a value"):
        parse_filter("card:", 0)
    with pytest.raises(ValueError, match="no filter key 'colour'"):
        parse_filter("colour:red", 0)
    f = parse_filter("deploy https://api.example.com/x card:c1", 0)
    assert (f.text, f.card) == ("deploy https://api.example.com/x", "c1")


def test_columns_give_way_least_needed_first() -> None:
    """arrow goes first, then why, then call; outcome and payload always stay."""
    names = [c.name for c in columns_for(80)]
    assert "outcome" in names and "payload" in names and "why" not in names
    at_120 = [c.name for c in columns_for(120)]
    assert "why" in at_120 and "arrow" not in at_120 and "call" in at_120
    assert [c.name for c in columns_for(200)][-2:] == ["why", "payload"]


def test_sparkline_heights() -> None:
    """Each count is a bar relative to the largest; 0 is blank."""
    from tui.widgets.timeline import sparkline

    assert sparkline([0, 1, 2, 4]) == " ▂▄█"
    assert sparkline([0, 0]) == "  "


async def test_timeline_counts_the_filtered_rows(tui_db: Path, tui_clock: VirtualClock) -> None:
    """Above the log: allowed, refused and held over time, for the whole log or a filter."""
    from tui.widgets.timeline import Timeline

    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        chart = str(screen.query_one(Timeline).render())
        rows = app.engine.log_rows()
        held = sum(1 for r in rows if r["outcome"] == "held")
        refused = sum(1 for r in rows if r["outcome"] == "denied")
        lines = {line.split()[0]: line for line in chart.splitlines() if line.strip()}
        assert lines["held"].endswith(f" {held}") and lines["refused"].endswith(f" {refused}")
        assert "█" in lines["allowed"]
        assert screen.apply_filter("outcome:denied")
        await settle(pilot)
        lines = {line.split()[0]: line for line in
                 str(screen.query_one(Timeline).render()).splitlines() if line.strip()}
        assert lines["allowed"].endswith(" 0") and lines["refused"].endswith(f" {refused}")


async def test_copy_a_row_and_export_the_filter(tui_db: Path, tui_clock: VirtualClock,
                                                tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """c copies the selected row as JSON; x writes the filtered rows as JSON Lines (item 15)."""
    monkeypatch.chdir(tmp_path)
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        await pilot.press("c")
        await settle(pilot)
        last = app.engine.log_rows()[-1]
        assert json.loads(app.clipboard)["seq"] == last["seq"]
        assert screen.apply_filter("outcome:held")
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        files = list(tmp_path.glob("arrowgate-log-*.jsonl"))
        assert len(files) == 1
        rows = [json.loads(line) for line in files[0].read_text().splitlines()]
        assert [r["seq"] for r in rows] == [r["seq"] for r in app.engine.log_rows()
                                            if r["outcome"] == "held"]


async def test_copy_only_the_payload(tui_db: Path, tui_clock: VirtualClock) -> None:
    """p copies the selected row's payload alone: line breaks kept, escapes made visible."""
    engine = Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None))
    try:
        await engine.call("standup", "agents.prompt", "claude",
                          {"text": "line one\n\x1b[201~rm -rf ~\tdone"})
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        last = app.engine.log_rows()[-1]
        await pilot.press("p")
        await settle(pilot)
        assert app.clipboard == "line one\n␛[201~rm -rf ~\tdone"
        assert any(f"payload of row {last['seq']} copied" in n.message
                   and "visible symbols" in n.message for n in app._notifications)
        # AND c still copies the whole row, which the payload alone is not
        await pilot.press("c")
        await settle(pilot)
        assert json.loads(app.clipboard)["seq"] == last["seq"]


async def test_tool_call_resolutions_filter_and_show(tui_db: Path, tui_clock: VirtualClock) -> None:
    """A tool call's answer (outcome answered) is a known outcome: the filter takes it."""
    from engine.app.cli import LOG_OUTCOMES
    from tui.screens.arrow_log import OUTCOMES

    assert set(OUTCOMES) == set(LOG_OUTCOMES) >= {"answered", "failed"}
    engine = Engine.open(tui_db, clock=tui_clock, world=World(net=None, fs=None))
    try:
        opened = await engine.tool("claude", "standup", "summarize", {})
        assert opened.outcome == "ok", opened
        await engine.answer_tool(opened.value["id"], result={"ok": True}, by="card:standup")
    finally:
        engine.close()
    app = make_app(tui_db, tui_clock, start="log")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ArrowLogScreen)
        assert screen.apply_filter("outcome:answered")
        await settle(pilot)
        view = screen.query_one(LogView)
        assert view.count == 1
        assert "answered" in screen_output(app)[0]
