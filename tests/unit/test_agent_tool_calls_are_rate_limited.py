"""No agent can exhaust the store with tool calls (SPEC §8 "Bounds", §9), on SQLite and
on PostgreSQL.

Each tool call an agent makes is a row on the arrow's log holding its arguments whole (up
to ``max_payload``, 256 KiB), a stored tool call holding them again, a ``tool.call`` event,
and its resolution's row. The bound on open calls (`MAX_OPEN_TOOL_CALLS`) bounds none of
that: a call cancelled or answered at once frees its place. So an agent's tool calls count
in a rolling window of their own, key ``tool-call``, 120 in any 60 s by default (the
workspace setting ``tool_call_limit``), in the same windows as SPEC §6's keys (kept in the
store across a restart, ``RATE_LIMITED`` with ``retry_after``) — the agent's, as the
agent is the caller. One more is refused, logged as any refusal (4 KiB of its arguments,
within ``denial_log_limit``), and opens nothing.

(Found in round 27's flood audit: an agent could open and cancel tool calls of 256 KiB of
arguments as fast as the engine ran, each logged whole; nothing ever refused one.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from canvas import InvalidSetting, WorkspaceSettings
from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.events import Event
from tests.conftest import manifest, offer_install, open_store

KIB = 1024
#: A tool that takes any text: its arguments are the agent's to choose.
RELAY = {"name": "relay", "input": {"type": "object", "properties": {"text": {"type": "string"}}}}


async def _canvas(engine: Engine, tmp_path: Path, settings: dict[str, Any] | None = None
                  ) -> None:
    """Card c1 offering ``relay``, connected to agents a1 (arrow e1) and a2 (arrow e2)."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings=settings)
    await offer_install(engine, manifest("acme.relay", {}, tools=[RELAY]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"},
                          workspace="w1")
    for agent in ("a1", "a2"):
        await engine.add_node({"id": agent, "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    await engine.add_arrow({"id": "e2", "from": "a2", "to": "c1"})


async def test_an_agents_tool_calls_count_in_a_rolling_window(store: str,
                                                              tmp_path: Path) -> None:
    """120 tool calls of large arguments in a minute, each cancelled at once; the 121st is
    RATE_LIMITED with retry_after, logged cut to 4 KiB, nothing opened nor told the card;
    another agent has a window of its own; a restart keeps it; a minute on, calls go."""
    clock = VirtualClock(1000.0)
    events: list[Event] = []
    engine = open_store(store, clock=clock, sink=events.append)
    await _canvas(engine, tmp_path)
    big = {"text": "x" * (32 * KIB)}
    # GIVEN 120 tool calls within one minute, each given up on at once (none stays open)
    for _ in range(120):
        d = await engine.tool("a1", "c1", "relay", big)
        assert d.allowed, d.message
        await engine.cancel_tool(d.value["id"], by="agent:a1")
        clock.t += 0.25
    told = sum(1 for e in events if e.type == "tool.call")
    rows = len(engine.log_rows(arrow="e1"))
    # WHEN the agent calls once more in the same minute
    refused = await engine.tool("a1", "c1", "relay", big)
    # THEN it is refused, saying when it may call again
    assert (refused.outcome, refused.code, refused.reason) == (
        "rate-limited", "RATE_LIMITED", "tool-call")
    assert refused.retry_after is not None and 29 < refused.retry_after <= 30
    assert refused.message.startswith("RATE_LIMITED: agent a1 may not call c1.relay")
    assert "at most 120" in refused.message
    # ... logged as a refusal, its arguments cut, and nothing opened or sent to the card
    logged = engine.log_rows(arrow="e1")
    assert len(logged) == rows + 1
    assert (logged[-1]["outcome"], logged[-1]["code"]) == ("rate-limited", "RATE_LIMITED")
    assert len(str(logged[-1]["payload"]).encode()) <= 4096
    assert not engine.state.tool_calls
    assert sum(1 for e in events if e.type == "tool.call") == told
    # ... while another agent calling the same card has its own window
    assert (await engine.tool("a2", "c1", "relay", {"text": "mine"})).allowed
    engine.close()
    # ... and after a restart
    again = open_store(store, clock=clock)
    try:
        refused = await again.tool("a1", "c1", "relay", {"text": "after"})
        assert (refused.code, refused.reason) == ("RATE_LIMITED", "tool-call")
        assert refused.retry_after is not None and 29 < refused.retry_after <= 30
        clock.t += 30
        assert (await again.tool("a1", "c1", "relay", {"text": "later"})).allowed
    finally:
        again.close()


async def test_the_tool_call_window_counts_what_the_workspace_sets(store: str,
                                                                   tmp_path: Path) -> None:
    """tool_call_limit 3: the fourth call in a minute is refused, saying 3; refusals
    never count, and beyond denial_log_limit they are summed up, not logged one by one."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        await _canvas(engine, tmp_path, {"tool_call_limit": 3, "denial_log_limit": 2})
        assert engine.state.workspaces["w1"].settings.tool_call_limit == 3
        for _ in range(3):
            assert (await engine.tool("a1", "c1", "relay", {"text": "t"})).allowed
        rows = len(engine.log_rows(arrow="e1"))
        for _ in range(10):
            refused = await engine.tool("a1", "c1", "relay", {"text": "t" * KIB})
            assert (refused.code, refused.reason) == ("RATE_LIMITED", "tool-call")
            assert "at most 3 " in refused.message
        # Two refusals logged row by row (denial_log_limit), eight only counted
        assert len(engine.log_rows(arrow="e1")) == rows + 2
        clock.t += 60
        assert (await engine.tool("a1", "c1", "relay", {"text": "t"})).allowed
        summary = [r for r in engine.log_rows(card="c1") if r["outcome"] == "suppressed"]
        assert len(summary) == 1 and json.loads(summary[0]["payload"])["count"] == 8
        assert engine.verify_log().ok
    finally:
        engine.close()


@pytest.mark.parametrize("value", [0, -1, 1_000_001, True, "120", 1.5, None])
def test_tool_call_limit_is_checked_as_every_setting(value: Any) -> None:
    """A count of calls: a whole number from 1 to 1,000,000, else bad-setting naming it."""
    with pytest.raises(InvalidSetting, match="'tool_call_limit'"):
        WorkspaceSettings.from_dict({"tool_call_limit": value})
    assert WorkspaceSettings().tool_call_limit == 120
