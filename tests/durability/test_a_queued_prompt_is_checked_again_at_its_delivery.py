"""A queued prompt is checked again when it is delivered (SPEC §5 checks 1–9, §6, §8):
what was true when it was queued must still be true when it reaches the agent.

A prompt passes the checks and waits in its agent's queue, for the agent to be
``waiting`` and for the workspace's budget; meanwhile the canvas, the grants and the
settings may change. A change an engine makes re-checks the open prompts there and
then (`Prompts.revalidate`); the delivery checks again all the same, so a change no
re-check followed — made while no engine ran (by hand, or by an arrowgate that did not
re-check it) — never lets through a prompt that would not be accepted now. Such a
prompt is cancelled at its delivery with the error a new one would get: its resolution
row ``cancelled`` with that code, the card told ``prompt.resolved``, and the queue goes
on to the next prompt. On SQLite and PostgreSQL, across a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from tests.durability.targets import Target

from ..conftest import manifest, offer_install


async def _two_hops(make_engine: Any, tmp_path: Path) -> tuple[Engine, str, str]:
    """Card c1 (acme.relay, a tool) wired to agents a1, a2, a3; card d1 (acme.other) to
    a3. a1 calls c1's tool, c1 prompts a2, a2 calls c1's tool, and c1 prompts a3 (busy)
    in that call: a queued prompt of two hops. Then d1's one-hop prompt queues behind
    it. The engine and the two prompts' ids."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.relay", {"agents.prompt": {}}, tools=["relay"]))
    await offer_install(engine, manifest("acme.other", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    await engine.add_node({"id": "d1", "type": "card", "package": "acme.other"}, workspace="w1")
    for agent in ("a1", "a2", "a3"):
        await engine.add_node({"id": agent, "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": f"e-{agent}", "from": "c1", "to": agent})
    await engine.add_arrow({"id": "d-a3", "from": "d1", "to": "a3"})
    k1 = (await engine.tool("a1", "c1", "relay")).value["id"]
    assert (await engine.call("c1", "agents.prompt", "a2", {"text": "hop 1"},
                              context=k1)).outcome == "queued"
    k2 = (await engine.tool("a2", "c1", "relay")).value["id"]
    await engine.set_node("a3", {"status": "working"})
    far = await engine.call("c1", "agents.prompt", "a3", {"text": "hop 2"}, context=k2)
    near = await engine.call("d1", "agents.prompt", "a3", {"text": "one hop"})
    assert far.outcome == near.outcome == "queued"
    assert engine.log_rows(arrow="e-a3")[-1]["chain"] == ["a1", "c1", "a2", "c1", "a3"]
    return engine, str(far.prompt), str(near.prompt)


async def test_a_hop_limit_lowered_while_no_engine_ran_cancels_the_prompt_at_delivery(
        make_engine: Any, tmp_path: Path, target: Target) -> None:
    """The hop limit set to 1 in the store while the engine was stopped: at the agent's
    turn's end the two-hop prompt is cancelled LOOP_REFUSED hop-limit, not delivered,
    and the one-hop prompt behind it is delivered."""
    # GIVEN a queued prompt of two hops, and a one-hop prompt behind it
    engine, far, near = await _two_hops(make_engine, tmp_path)
    engine.close()
    # AND the hop limit lowered to 1 while no engine ran, so no re-check followed
    target.execute({
        "sqlite": "update workspaces set settings = json_set(settings, '$.hop_limit', 1)",
        "postgresql": "update workspaces set settings = "
                      "jsonb_set(settings::jsonb, '{hop_limit}', '1')::text"})
    engine = make_engine()
    assert engine.state.workspaces["w1"].settings.hop_limit == 1
    assert engine.prompt(far).state == engine.prompt(near).state == "queued"
    sub = engine.subscribe("c1")
    # WHEN a3's turn ends and its queue is delivered
    await engine.agent_replied("a3", "done")
    # THEN the two-hop prompt is cancelled with the error a new one would get now
    out = engine.outcome(far)
    assert (out.outcome, out.code, out.reason) == ("denied", "LOOP_REFUSED", "hop-limit")
    assert engine.prompt(far).state == "cancelled"
    row = engine.log_rows(arrow="e-a3")[-1]
    assert (row["outcome"], row["code"], row["reason"]) == ("cancelled", "LOOP_REFUSED",
                                                             "hop-limit")
    assert row["chain"] == ["a1", "c1", "a2", "c1", "a3"]
    # AND its card is told, and anyone waiting on it learns the resolution
    told = [(e.type, e.data.get("prompt"), e.data.get("state"), e.data.get("code"))
            for e in sub.ready() if e.type == "prompt.resolved"]
    assert told == [("prompt.resolved", far, "cancelled", "LOOP_REFUSED")], told
    waited = await engine.wait(far)
    assert (waited.code, waited.value["resolution"]) == ("LOOP_REFUSED", "cancelled")
    # AND the queue went on: the one-hop prompt was delivered in its place
    assert engine.prompt(near).state == "delivered"


async def test_a_grant_gone_while_no_engine_ran_cancels_the_prompt_at_delivery(
        make_engine: Any, tmp_path: Path, target: Target) -> None:
    """agents.prompt taken from the package in the store while the engine was stopped:
    the queued prompt is cancelled PERMISSION_DENIED not-granted at delivery."""
    # GIVEN a queued prompt of c1's to a3, and d1's behind it
    engine, far, near = await _two_hops(make_engine, tmp_path)
    engine.close()
    # AND acme.relay's grant of agents.prompt gone from the store, re-checked by no one
    target.execute("delete from grants where package = 'acme.relay'")
    engine = make_engine()
    assert not engine.state.granted("acme.relay", "agents.prompt")
    assert engine.prompt(far).state == "queued"
    # WHEN a3's turn ends
    await engine.agent_replied("a3", "done")
    # THEN c1's prompt is cancelled not-granted, and d1's is delivered
    out = engine.outcome(far)
    assert (out.code, out.reason) == ("PERMISSION_DENIED", "not-granted")
    assert engine.log_rows(arrow="e-a3")[-1]["outcome"] == "cancelled"
    assert engine.prompt(near).state == "delivered"


async def test_a_queued_prompt_outlives_the_tool_call_it_was_made_in(
        make_engine: Any, tmp_path: Path, clock: Any) -> None:
    """The tool calls whose context a queued prompt named end (one answered, one timed
    out): at the agent's turn's end it is delivered all the same, with the chain it was
    queued with (the decision: a card passes the work on, then answers its call)."""
    # GIVEN the two-hop prompt queued in a2's call k2 (itself in a1's k1)
    engine, far, _near = await _two_hops(make_engine, tmp_path)
    k1, k2 = (tc.id for tc in sorted(engine.state.tool_calls.values(),
                                    key=lambda tc: tc.position))
    # WHEN c1 answers k2 and k1 times out, and a3's turn ends after a restart
    await engine.answer_tool(k2, result="passed on to a3", by="card:c1")
    clock.t += 121
    engine.close()
    engine = make_engine()
    await engine.agent_replied("a3", "done")
    assert [engine.tool_call(k).state for k in (k1, k2)] == [
        "expired", "answered"]
    # THEN it was delivered, as queued, with its chain
    assert engine.prompt(far).state == "delivered"
    assert engine.prompt(far).chain == ["a1", "c1", "a2", "c1", "a3"]
