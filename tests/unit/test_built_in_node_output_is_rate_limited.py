"""Data a built-in node (an agent's ``status`` and ``reply``, a terminal's ``exit``, a
note's ``text``, ...) sends a card on a port arrow counts in a rolling window of the
sending node (SPEC §8 "Bounds": hostile input never floods the log), on SQLite and on
PostgreSQL.

Each delivery is an ``ok`` row on the port arrow, driven by what the agent or terminal
prints, not by a card's call: a loop in a terminal emitting its exit mark, or an agent
whose status flips as its output is read, wrote one row per port arrow per mark. So the
deliveries of one sending node, all its ports and arrows together, count under the key
``node-output``, 60 in any 60 s by default (the workspace setting ``node_output_limit``),
kept across a restart; one more is ``RATE_LIMITED`` with ``retry_after``, not delivered,
and logged in the sender's refusal budget (``denial_log_limit``, the rest summed in one
``suppressed`` row).

(Found in round 28 by the flood28 helper: 200 exits of one terminal into a card were 200
``ok`` rows, unbounded.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from canvas.errors import InvalidSetting
from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.decision import Decision
from engine.core.errors import InvalidArgument
from engine.core.events import Event
from engine.services.record import Recorder
from tests.conftest import manifest, offer_install, open_store


@pytest.fixture
def open_engine(store: str) -> Iterator[Callable[..., Engine]]:
    """Open engines on the store (a restart is opening another); all closed at the end."""
    opened: list[Engine] = []

    def make(clock: VirtualClock, sink: Any = None) -> Engine:
        engine = open_store(store, clock=clock, sink=sink)
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()


@pytest.fixture
def refused(monkeypatch: pytest.MonkeyPatch) -> list[Decision]:
    """The refusals of deliveries from built-in nodes, as decided (a row keeps no
    ``retry_after`` nor message)."""
    seen: list[Decision] = []
    original = Recorder.refused_delivery

    def spy(self: Recorder, decision: Decision, payload: str, sender: Any) -> None:
        seen.append(decision)
        original(self, decision, payload, sender)

    monkeypatch.setattr(Recorder, "refused_delivery", spy)
    return seen


async def _canvas(engine: Engine, folder: Path) -> None:
    """A terminal t1 and an agent a1 wired on every output port to a card r1 that may read them."""
    folder.mkdir(exist_ok=True)
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.reader", {"agents.output": {}}, ports={
        "inputs": ["exit", "status", "reply"], "outputs": []}))
    for node in ({"id": "r1", "type": "card", "package": "acme.reader"},
                 {"id": "t1", "type": "terminal"},
                 {"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code"}):
        await engine.add_node(node, workspace="w1")
    for arrow in ({"id": "px", "from": "t1", "from_port": "exit", "to": "r1", "to_port": "exit"},
                  {"id": "ps", "from": "a1", "from_port": "status", "to": "r1",
                   "to_port": "status"},
                  {"id": "pr", "from": "a1", "from_port": "reply", "to": "r1",
                   "to_port": "reply"}):
        await engine.add_arrow(arrow)


def _delivered(events: list[Event], source: str) -> int:
    return sum(1 for e in events if e.type == "port.data" and e.card == "r1"
               and e.data.get("source") == source)


async def test_a_terminals_exits_count_in_a_rolling_window(open_engine: Callable[..., Engine], tmp_path: Path,
                                                           refused: list[Decision]) -> None:
    """60 exits in a minute reach the card; the 61st is refused with retry_after, logged
    rate-limited, not delivered; a restart keeps the window; a minute on, exits flow again."""
    clock = VirtualClock(1000.0)
    events: list[Event] = []
    engine = open_engine(clock, events.append)
    await _canvas(engine, tmp_path / "ws")
    # GIVEN 60 exits within one minute
    for code in range(60):
        await engine.command_exited("t1", code)
        clock.t += 0.5
    assert [r["outcome"] for r in engine.log_rows(arrow="px")] == ["ok"] * 60
    # WHEN the terminal exits once more
    await engine.command_exited("t1", 7)
    # THEN the delivery is refused with when the window frees, and goes nowhere
    assert _delivered(events, "t1") == 60
    row = engine.log_rows(arrow="px")[-1]
    assert (row["outcome"], row["code"], row["reason"], row["card"], row["target"]) == (
        "rate-limited", "RATE_LIMITED", "node-output", "r1", "t1"), row
    told = refused[-1]
    assert (told.code, told.card, told.target, told.arrow) == ("RATE_LIMITED", "r1", "t1", "px")
    assert told.retry_after == pytest.approx(30.0), told
    assert engine.verify_log().ok
    engine.close()
    # AND a restart keeps the window
    again = open_engine(clock, events.append)
    await again.command_exited("t1", 8)
    assert again.log_rows(arrow="px")[-1]["code"] == "RATE_LIMITED"
    # the window frees when its oldest delivery (at 1000) is 60 s old
    clock.t = 1059.9
    await again.command_exited("t1", 9)
    assert again.log_rows(arrow="px")[-1]["code"] == "RATE_LIMITED"
    clock.t = 1060.0
    await again.command_exited("t1", 9)
    assert again.log_rows(arrow="px")[-1]["outcome"] == "ok"
    assert _delivered(events, "t1") == 61


async def test_an_exit_loop_writes_a_bounded_log(open_engine: Callable[..., Engine], tmp_path: Path) -> None:
    """200 exits at once (a loop printing the mark): 60 ok rows, the sender's refusal
    budget of rate-limited rows, the rest summed in one suppressed row at close."""
    clock = VirtualClock(1000.0)
    engine = open_engine(clock)
    await _canvas(engine, tmp_path / "ws")
    await engine.set_settings("w1", {"denial_log_limit": 20})
    # WHEN the terminal's shell emits its exit mark in a loop
    for _ in range(200):
        await engine.command_exited("t1", 0)
    engine.close()
    again = open_engine(clock)
    # THEN the log holds 60 deliveries, 20 refusals and one row counting the rest
    rows = [r for r in again.log_rows() if r["target"] == "t1"]
    outcomes = [r["outcome"] for r in rows]
    assert outcomes == ["ok"] * 60 + ["rate-limited"] * 20 + ["suppressed"], outcomes
    summary = json.loads(rows[-1]["payload"])
    assert summary["count"] == 120
    assert rows[-1]["code"] == "RATE_LIMITED"
    assert again.verify_log().ok


async def test_an_agents_status_and_reply_count_together(open_engine: Callable[..., Engine],
                                                        tmp_path: Path) -> None:
    """An agent's status and reply deliveries share its one window; a status the card
    missed is a state it reads with agents.get."""
    clock = VirtualClock(1000.0)
    events: list[Event] = []
    engine = open_engine(clock, events.append)
    await _canvas(engine, tmp_path / "ws")
    # GIVEN 20 turns: each a status to working, one back to waiting, and a reply
    for turn in range(20):
        await engine.driver_status("a1", "working")
        await engine.agent_replied("a1", f"reply {turn}")
        clock.t += 1
    assert _delivered(events, "a1") == 60
    # WHEN the agent turns once more
    await engine.driver_status("a1", "working")
    await engine.agent_replied("a1", "one more")
    # THEN none of it is delivered: each refused RATE_LIMITED on its arrow
    assert _delivered(events, "a1") == 60
    for arrow in ("ps", "pr"):
        row = engine.log_rows(arrow=arrow)[-1]
        assert (row["outcome"], row["reason"]) == ("rate-limited", "node-output"), row
    # AND the card reads the status it missed
    got = await engine.call("r1", "agents.get", "a1")
    assert got.outcome == "ok" and got.value["status"] == "waiting", got
    # AND a terminal's window is its own
    await engine.command_exited("t1", 0)
    assert engine.log_rows(arrow="px")[-1]["outcome"] == "ok"


async def test_the_window_is_the_workspace_setting(make_engine: Any, tmp_path: Path,
                                                   refused: list[Decision]) -> None:
    """node_output_limit sets the window's count (validated as the others): past it the
    refusal names that count."""
    engine: Engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    for bad in (0, -1, 1.5, "5", True):
        with pytest.raises((InvalidSetting, InvalidArgument), match="node_output_limit"):
            await engine.set_settings("w1", {"node_output_limit": bad})
    await engine.set_settings("w1", {"node_output_limit": 5})
    for code in range(6):
        await engine.command_exited("t1", code)
    rows = engine.log_rows(arrow="px")
    assert [r["outcome"] for r in rows] == ["ok"] * 5 + ["rate-limited"], rows
    assert "at most 5 node-output" in refused[-1].message, refused[-1].message
