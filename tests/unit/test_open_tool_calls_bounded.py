"""An agent has at most `MAX_OPEN_TOOL_CALLS` tool calls open at once: one more is
refused (``QUEUE_FULL``, reason ``tool-calls``) and logged, and nothing is opened; an
answer, an expiry or a cancellation makes room again.

(Found in round 19: nothing bounded them. An agent opened 10,000 tool calls, each kept
in memory with up to max_payload of arguments; opening them took 43 s, as each new
one cost more, and every prompt of the card then took 15 times as long, checked
against every open chain.)
"""

from __future__ import annotations

from typing import Any

from engine.core.tools import MAX_OPEN_TOOL_CALLS


async def _out_of_the_way(engine: Any) -> None:
    # Their subject is the calls open at once, made within one instant: the agent's
    # window of tool calls (120 a minute by default) set out of their way.
    await engine.set_settings("w1", {"tool_call_limit": 1_000_000})


async def test_one_more_than_the_bound_is_refused(world: Any, clock: Any) -> None:
    engine = world
    await _out_of_the_way(engine)
    ids = []
    for _ in range(MAX_OPEN_TOOL_CALLS):
        d = await engine.tool("a1", "c1", "relay")
        assert d.allowed, d.message
        ids.append(d.value["id"])
    rows = len(engine.log_rows(arrow="e1"))
    refused = await engine.tool("a1", "c1", "relay")
    assert (refused.outcome, refused.code, refused.reason) == ("denied", "QUEUE_FULL",
                                                               "tool-calls"), refused
    assert str(MAX_OPEN_TOOL_CALLS) in refused.message
    assert len(engine.state.tool_calls) == MAX_OPEN_TOOL_CALLS
    logged = engine.log_rows(arrow="e1")
    assert len(logged) == rows + 1 and logged[-1]["code"] == "QUEUE_FULL"

    # Each way a call ends makes room for one more.
    await engine.answer_tool(ids[0], result={"ok": True}, by="card:c1")
    assert (await engine.tool("a1", "c1", "relay")).allowed
    assert (await engine.tool("a1", "c1", "relay")).code == "QUEUE_FULL"
    await engine.cancel_tool(ids[1], by="agent:a1")
    assert (await engine.tool("a1", "c1", "relay")).allowed
    clock.t = engine.tool_call(ids[2]).deadline
    assert (await engine.tool("a1", "c1", "relay")).allowed


async def test_the_bound_is_each_agents_own(world: Any) -> None:
    engine = world
    await _out_of_the_way(engine)
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a2"})
    for _ in range(MAX_OPEN_TOOL_CALLS):
        assert (await engine.tool("a1", "c1", "relay")).allowed
    assert (await engine.tool("a1", "c1", "relay")).code == "QUEUE_FULL"
    assert (await engine.tool("a2", "c1", "relay")).allowed
