"""SPEC §9 clause by clause, through the engine, on SQLite and PostgreSQL: the arrow a
tool call needs, the causal chain and the loop guard along it, the arguments' checks,
the `tool.call` event, the one answer, the resolutions, contexts — and restarts.

Round 27's audit of §9: each test names the clause it holds; most held already.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.errors import InvalidRequest

from ..conftest import manifest, offer_install

FIND = {"name": "find", "description": "Find notes",
        "input": {"type": "object", "additionalProperties": False, "required": ["query"],
                  "properties": {"query": {"type": "string"},
                                 "filter": {"type": "object", "required": ["since"],
                                            "properties": {"since": {"type": "integer"}}}}}}


async def _world(make_engine: Any, tmp_path: Path, agents: int = 3) -> Engine:
    """Cards c1 and c2 of acme.relay (tools ``relay`` and ``find``; may prompt), agents
    a1..a<n>; c1 is wired to every agent by a plain arrow from the card; c2 to none."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.relay", {"agents.prompt": {}},
                                         tools=["relay", FIND]))
    for card in ("c1", "c2"):
        await engine.add_node({"id": card, "type": "card", "package": "acme.relay"},
                              workspace="w1")
    for n in range(1, agents + 1):
        await engine.add_node({"id": f"a{n}", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": f"e-a{n}", "from": "c1", "to": f"a{n}"})
    return engine


def _rows(engine: Engine) -> int:
    return len(engine.log_rows())


# ------------------------------------------------------------------ the arrow
async def test_a_tool_call_needs_a_plain_arrow_either_way_and_the_arrow_comes_first(
        make_engine: Any, tmp_path: Path) -> None:
    """Agent→card and card→agent arrows both carry a tool call; a port arrow or none is
    ``not-connected``, also for a tool the card does not offer; a terminal is no caller."""
    engine = await _world(make_engine, tmp_path)
    await engine.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    await engine.add_arrow({"id": "back", "from": "a1", "to": "c2"})  # agent → card
    assert (await engine.tool("a1", "c2", "relay")).arrow == "back"
    assert (await engine.tool("a1", "c1", "relay")).arrow == "e-a1"  # card → agent
    for agent, card, tool in (("a2", "c2", "relay"), ("a2", "c2", "nosuch"),
                              ("a3", "c2", "nosuch"), ("t1", "c1", "relay")):
        d = await engine.tool(agent, card, tool)
        assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-connected"), (agent, tool)
    await engine.add_arrow({"id": "t-c1", "from": "t1", "to": "c1"})
    d = await engine.tool("t1", "c1", "relay")
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-connected")
    # with the arrow, an unknown tool is UNKNOWN_TOOL, logged on that arrow
    d = await engine.tool("a1", "c1", "nosuch")
    assert (d.code, d.arrow) == ("UNKNOWN_TOOL", "e-a1")
    assert (engine.log_rows(arrow="e-a1")[-1]["call"], engine.log_rows(arrow="e-a1")[-1][
        "outcome"]) == ("tool:nosuch", "denied")
    assert [tc.id for tc in engine.state.tool_calls.values()] == ["tc1", "tc2"]


async def test_a_port_arrow_carries_no_tool_call(make_engine: Any, tmp_path: Path) -> None:
    """An agent joined to a card only by a port arrow cannot call its tools."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.port", {"agents.prompt": {}}, tools=["relay"],
                                         ports={"inputs": [], "outputs": ["out"]}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.port"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "p1", "from": "c1", "from_port": "out", "to": "a1",
                            "to_port": "prompt"})
    d = await engine.tool("a1", "c1", "relay")
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-connected")
    assert engine.state.tool_calls == {}


# ---------------------------------------------------------- chain and loop guard
async def test_each_hop_is_logged_on_its_own_arrow_and_the_hop_limit_allows_three(
        make_engine: Any, tmp_path: Path) -> None:
    """a1 → c1 → a2 → c1 → a3 → c1 → a4 is three prompts (allowed at the default
    limit), each row on its own arrow with its chain; a fourth is ``hop-limit``, and a
    fourth back to a1 is a ``cycle`` (the cycle is told first)."""
    engine = await _world(make_engine, tmp_path, agents=5)
    caller = "a1"
    chain = ["a1", "c1"]
    for target in ("a2", "a3", "a4"):
        k = (await engine.tool(caller, "c1", "relay")).value["id"]
        assert engine.tool_call(k).chain == chain  # type: ignore[union-attr]
        d = await engine.call("c1", "agents.prompt", target, {"text": "on"}, context=k)
        assert d.outcome == "queued", (target, d.message)
        chain = [*chain, target]
        row = engine.log_rows(arrow=f"e-{target}")[-1]
        assert (row["call"], row["outcome"], row["chain"]) == ("agents.prompt", "queued", chain)
        chain = [*chain, "c1"]
        caller = target
    k = (await engine.tool("a4", "c1", "relay")).value["id"]
    both = await engine.call("c1", "agents.prompt", "a1", {"text": "back"}, context=k)
    assert (both.code, both.reason) == ("LOOP_REFUSED", "cycle")
    fourth = await engine.call("c1", "agents.prompt", "a5", {"text": "far"}, context=k)
    assert (fourth.code, fourth.reason) == ("LOOP_REFUSED", "hop-limit")
    assert "4 prompts" in fourth.message
    row = engine.log_rows(arrow="e-a5")[-1]
    assert (row["outcome"], row["code"], row["chain"]) == ("denied", "LOOP_REFUSED", chain)


async def test_a_prompt_outside_a_tool_call_starts_its_chain_at_one(
        make_engine: Any, tmp_path: Path) -> None:
    """A hop limit of 1 passes a prompt made outside a tool call, logged with the chain
    card → agent; through a tool call of that agent, a second prompt is refused."""
    engine = await _world(make_engine, tmp_path)
    await engine.set_settings("w1", {"hop_limit": 1})
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "hi"})).outcome == "queued"
    assert engine.log_rows(arrow="e-a1")[-1]["chain"] == ["c1", "a1"]
    k = (await engine.tool("a1", "c1", "relay")).value["id"]
    assert engine.tool_call(k).chain == ["c1", "a1", "c1"]  # type: ignore[union-attr]
    d = await engine.call("c1", "agents.prompt", "a2", {"text": "on"}, context=k)
    assert (d.code, d.reason) == ("LOOP_REFUSED", "hop-limit")


async def test_a_prompt_back_to_the_calling_agent_or_one_further_up_is_a_cycle(
        make_engine: Any, tmp_path: Path) -> None:
    """In a2's call made in a1's chain, c1 may prompt neither a2 nor a1 (named or not)."""
    engine = await _world(make_engine, tmp_path)
    k1 = (await engine.tool("a1", "c1", "relay")).value["id"]
    assert (await engine.call("c1", "agents.prompt", "a2", {"text": "on"},
                              context=k1)).outcome == "queued"
    assert (await engine.cancel_tool(k1, by="agent:a1")).state == "cancelled"
    k2 = (await engine.tool("a2", "c1", "relay")).value["id"]
    for target in ("a2", "a1"):
        for context in (k2, None):
            d = await engine.call("c1", "agents.prompt", target, {"text": "x"}, context=context)
            assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle"), (target, context)
    assert engine.log_rows(outcome="queued")[-1]["arrow"] == "e-a2"  # nothing more queued


# ------------------------------------------------------------------- arguments
@pytest.mark.parametrize(("args", "reason"), [
    ({}, "args.query"),
    ({"query": 7}, "args.query"),
    ({"query": "x", "extra": 1}, "args"),
    ({"query": "x", "filter": {}}, "args.filter.since"),
    ({"query": "x", "filter": {"since": "yesterday"}}, "args.filter.since"),
    ([1, 2], "args"),
])
async def test_arguments_are_checked_against_the_schema_naming_the_argument(
        make_engine: Any, tmp_path: Path, args: Any, reason: str) -> None:
    """Missing, wrongly typed, extra (the schema forbids it) and nested arguments are
    ``INVALID_ARGUMENT`` naming the argument, logged as ``tool:find``; nothing opens."""
    engine = await _world(make_engine, tmp_path)
    sub = engine.subscribe("c1")
    d = await engine.tool("a1", "c1", "find", args)
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", reason)
    if reason == "args" and isinstance(args, dict):
        assert "'extra'" in d.message
    row = engine.log_rows(arrow="e-a1")[-1]
    assert (row["call"], row["outcome"], row["code"]) == ("tool:find", "denied",
                                                          "INVALID_ARGUMENT")
    assert engine.state.tool_calls == {} and sub.ready() == []  # the card is told nothing


# --------------------------------------------------------------- event, answer
async def test_the_tool_call_event_is_exactly_its_five_fields_and_only_for_the_card(
        make_engine: Any, tmp_path: Path) -> None:
    """``tool.call`` is ``{"id", "agent", "tool", "args", "chain"}``; c2 gets nothing."""
    engine = await _world(make_engine, tmp_path)
    mine, other = engine.subscribe("c1"), engine.subscribe("c2")
    d = await engine.tool("a1", "c1", "find", {"query": "q", "filter": {"since": 3}})
    row = engine.log_rows(arrow="e-a1")[-1]
    assert (row["call"], row["outcome"], row["prompt"]) == ("tool:find", "ok", d.value["id"])
    assert [(e.type, e.data) for e in mine.ready()] == [("tool.call", {
        "id": d.value["id"], "agent": "a1", "tool": "find",
        "args": {"query": "q", "filter": {"since": 3}}, "chain": ["a1", "c1"]})]
    assert other.ready() == []


@pytest.mark.parametrize("ended", ["answered", "failed", "expired", "cancelled"])
async def test_the_card_answers_once_and_a_refused_answer_changes_nothing(
        make_engine: Any, tmp_path: Path, clock: VirtualClock, ended: str) -> None:
    """Once a call has ended (answered, failed, timed out, cancelled) every answer is
    refused, as is one to an unknown call or another card's; the log, the call and the
    card's events stay as they were."""
    engine = await _world(make_engine, tmp_path)
    await engine.add_arrow({"id": "e2", "from": "a2", "to": "c2"})
    k = (await engine.tool("a1", "c1", "relay")).value["id"]
    theirs = (await engine.tool("a2", "c2", "relay")).value["id"]
    if ended == "answered":
        await engine.answer_tool(k, result={"ok": 1}, by="card:c1")
    elif ended == "failed":
        await engine.answer_tool(k, error="no", by="card:c1")
    elif ended == "expired":
        clock.t += 120
        await engine.expire_due()
        theirs = (await engine.tool("a2", "c2", "relay")).value["id"]
    else:
        await engine.cancel_tool(k, by="agent:a1")
    assert engine.tool_call(k).state == ended  # type: ignore[union-attr]
    sub = engine.subscribe("c1")
    rows, before = _rows(engine), engine.tool_call(k).to_json()  # type: ignore[union-attr]
    for call_id, by, reason in ((k, "card:c1", ended), (k, "card:c1", ended),
                                ("tc999", "card:c1", None), (theirs, "card:c1", None),
                                (k, "card:c2", None), (k, "agent:a1", None),
                                (k, "operator", None)):
        for answer in ({"result": 2}, {"error": "late"}):
            with pytest.raises(InvalidRequest) as refused:
                await engine.answer_tool(call_id, by=by, **answer)
            assert (refused.value.code, refused.value.reason) == ("NOT_FOUND", reason)
    assert _rows(engine) == rows and sub.ready() == []
    assert engine.tool_call(k).to_json() == before  # type: ignore[union-attr]
    assert engine.tool_call(theirs).is_open  # type: ignore[union-attr]
    engine.close()
    engine = make_engine()
    with pytest.raises(InvalidRequest):
        await engine.answer_tool(k, result=3, by="card:c1")
    assert engine.tool_call(k).to_json() == before  # type: ignore[union-attr]


async def test_the_default_timeout_is_120_seconds_of_the_engines_clock(
        make_engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    """Open at 119.9 s (across a restart), ``TOOL_TIMEOUT`` logged at its deadline once
    120 s have passed."""
    engine = await _world(make_engine, tmp_path)
    k = (await engine.tool("a1", "c1", "relay")).value["id"]
    clock.t += 60
    engine.close()
    engine = make_engine()
    clock.t += 59.9
    assert (await engine.wait_tool(k, timeout=0)).is_open
    clock.t += 0.1
    # the card's answer, the first thing after the deadline, finds the call expired
    with pytest.raises(InvalidRequest) as late:
        await engine.answer_tool(k, result="late", by="card:c1")
    assert (late.value.code, late.value.reason) == ("NOT_FOUND", "expired")
    tc = await engine.wait_tool(k, timeout=0)
    assert (tc.state, tc.code) == ("expired", "TOOL_TIMEOUT")
    row = engine.log_rows(arrow="e-a1")[-1]
    assert (row["outcome"], row["code"], row["t"]) == ("expired", "TOOL_TIMEOUT", 1120.0)


# ----------------------------------------------------------------- going away
@pytest.mark.parametrize("gone", ["arrow", "agent", "card"])
async def test_an_open_call_is_cancelled_when_its_arrow_agent_or_card_goes(
        make_engine: Any, tmp_path: Path, gone: str) -> None:
    """Each of the three cancels it (``not-connected``), logged on the call's arrow as
    its resolution; the card is told ``tool.resolved``; its context names nothing then."""
    engine = await _world(make_engine, tmp_path)
    k = (await engine.tool("a1", "c1", "relay")).value["id"]
    sub = engine.subscribe("c1")
    await engine.remove_arrow("e-a1") if gone == "arrow" else await engine.remove_node(
        {"agent": "a1", "card": "c1"}[gone])
    tc = await engine.wait_tool(k, timeout=0)
    assert (tc.state, tc.code, tc.reason) == ("cancelled", "PERMISSION_DENIED", "not-connected")
    row = [r for r in engine.log_rows() if r["prompt"] == k][-1]
    assert (row["arrow"], row["outcome"], row["call"]) == ("e-a1", "cancelled", "tool:relay")
    if gone != "card":
        assert [(e.type, e.data["state"]) for e in sub.ready()
                if e.type == "tool.resolved"] == [("tool.resolved", "cancelled")]
        d = await engine.call("c1", "agents.prompt", "a2", {"text": "x"}, context=k)
        assert (d.code, d.reason) == ("INVALID_ARGUMENT", "context")


async def test_a_revoke_leaves_the_call_open_and_refuses_what_the_card_does_in_it(
        make_engine: Any, tmp_path: Path) -> None:
    """A tool call needs no permission: revoking the package's ``agents.prompt`` keeps
    it open (the card may still answer), and the prompt the card makes in it is
    refused ``not-granted``."""
    engine = await _world(make_engine, tmp_path)
    k = (await engine.tool("a1", "c1", "relay")).value["id"]
    await engine.revoke("acme.relay", "agents.prompt")
    assert engine.tool_call(k).is_open  # type: ignore[union-attr]
    d = await engine.call("c1", "agents.prompt", "a2", {"text": "x"}, context=k)
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-granted")
    assert (await engine.answer_tool(k, result="done", by="card:c1")).state == "answered"


# --------------------------------------------------------------------- context
async def test_a_context_carries_its_chain_and_only_an_open_call_of_the_card_is_one(
        make_engine: Any, tmp_path: Path) -> None:
    """Another card's open call, an unknown id or a resolved call is refused as a
    context (``INVALID_ARGUMENT``, reason ``context``), logged; nothing is queued. An
    open call still names its chain after a restart."""
    engine = await _world(make_engine, tmp_path)
    await engine.add_arrow({"id": "e2", "from": "a3", "to": "c2"})
    theirs = (await engine.tool("a3", "c2", "relay")).value["id"]
    done = (await engine.tool("a1", "c1", "relay")).value["id"]
    await engine.answer_tool(done, result=None, by="card:c1")
    mine = (await engine.tool("a1", "c1", "relay")).value["id"]
    for context in (theirs, "tc999", done, ["tc1"], 7):
        d = await engine.call("c1", "agents.prompt", "a2", {"text": "x"},
                              context=context)  # type: ignore[arg-type]
        assert (d.code, d.reason) == ("INVALID_ARGUMENT", "context"), context
    assert not engine.log_rows(outcome="queued")
    engine.close()
    engine = make_engine()
    d = await engine.call("c1", "agents.prompt", "a2", {"text": "x"}, context=mine)
    assert d.outcome == "queued"
    assert engine.log_rows(arrow="e-a2")[-1]["chain"] == ["a1", "c1", "a2"]
    assert (await engine.answer_tool(mine, result=1, by="card:c1")).state == "answered"
