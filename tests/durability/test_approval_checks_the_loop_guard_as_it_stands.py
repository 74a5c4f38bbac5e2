"""At the moment of approval the engine checks the consent rules (checks 1–9 of SPEC §5)
again (SPEC §7): check 9, the loop guard, as it stands then — the held prompt's own
chain, and the chain of every tool call its card's package has open on the canvas by
then (SPEC §9), with the hop limit as it is set then. Refused, the prompt is cancelled
with that error and keeps the chain it was held with. On SQLite and PostgreSQL.

Found in round 31 ("approval re-checks the loop guard against its own chain"): c1's
prompt to the dangerous agent a2 was held with a chain of one hop; a2 then called c1's
tool, and the person's OK sent the prompt to a2 while a2 waited on c1 — a prompt c1
made then would have been refused as a cycle.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install


async def _canvas(make_engine: Any, tmp_path: Path) -> Engine:
    """c1 (a tool, prompts) wired to agents a1, a3 and the dangerous a2."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.relay", {"agents.prompt": {}}, tools=["relay"]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    for agent in ("a1", "a2", "a3"):
        await engine.add_node({"id": agent, "type": "agent", "dangerous": agent == "a2"},
                              workspace="w1")
        await engine.add_arrow({"id": f"e-{agent}", "from": "c1", "to": agent})
    return engine


async def _held(engine: Engine, text: str) -> str:
    """c1's prompt to a2, held; its id."""
    d = await engine.call("c1", "agents.prompt", "a2", {"text": text})
    assert d.outcome == "held", d
    assert d.prompt is not None
    return d.prompt


async def _approve(engine: Engine, prompt: str, text: str) -> Any:
    return await engine.approve_hold(prompt, text_sha256=hashlib.sha256(text.encode()).hexdigest())


async def test_a_hold_is_refused_at_approval_when_its_agent_now_waits_on_the_card(
        make_engine: Any, tmp_path: Path) -> None:
    """Held with chain c1 → a2; a2 then calls c1's tool: the OK is a cycle, cancelled."""
    # GIVEN c1's prompt to a2 held, then a2's tool call to c1, open
    engine = await _canvas(make_engine, tmp_path)
    prompt = await _held(engine, "tidy up")
    assert (await engine.tool("a2", "c1", "relay")).allowed
    # WHEN a person approves the text they were shown
    d = await _approve(engine, prompt, "tidy up")
    # THEN the prompt is cancelled as a cycle, as c1 prompting a2 now would be
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle"), d
    assert engine.state.prompts[prompt].state == "cancelled"
    row = engine.log_rows(arrow="e-a2")[-1]
    assert (row["outcome"], row["code"], row["chain"]) == ("cancelled", "LOOP_REFUSED",
                                                           ["c1", "a2"])
    assert not engine.log_rows(outcome="approved")


async def test_a_hold_is_refused_at_approval_past_the_hop_limit_a_longer_open_chain_gives(
        make_engine: Any, tmp_path: Path) -> None:
    """Held at one hop; by its approval c1 serves a two-hop chain and the limit is 1."""
    # GIVEN c1's prompt to a2 held (one hop), then a1's call k1 to c1, c1's prompt to a3
    # in it, and a3's call to c1 in that chain (a1 c1 a3 c1); the hop limit lowered to 1
    engine = await _canvas(make_engine, tmp_path)
    prompt = await _held(engine, "tidy up")
    k1 = (await engine.tool("a1", "c1", "relay")).value["id"]
    assert (await engine.call("c1", "agents.prompt", "a3", {"text": "hop 1"},
                              context=k1)).outcome == "queued"
    assert (await engine.tool("a3", "c1", "relay")).allowed
    await engine.set_settings("w1", {"hop_limit": 1})
    # WHEN a person approves it
    d = await _approve(engine, prompt, "tidy up")
    # THEN it would be the second hop along a3's open call: refused, cancelled
    assert (d.code, d.reason) == ("LOOP_REFUSED", "hop-limit"), d
    assert engine.state.prompts[prompt].state == "cancelled"
    row = engine.log_rows(arrow="e-a2")[-1]
    assert (row["outcome"], row["code"], row["chain"]) == ("cancelled", "LOOP_REFUSED",
                                                           ["c1", "a2"])


async def test_a_hold_no_open_chain_refuses_is_approved_with_its_own_chain(
        make_engine: Any, tmp_path: Path) -> None:
    """An open call whose chain does not refuse the prompt leaves the approval alone."""
    # GIVEN c1's prompt to a2 held, then a1's tool call to c1 (chain a1 c1: no a2)
    engine = await _canvas(make_engine, tmp_path)
    prompt = await _held(engine, "tidy up")
    assert (await engine.tool("a1", "c1", "relay")).allowed
    # WHEN approved, after a restart
    engine.close()
    engine = make_engine()
    d = await _approve(engine, prompt, "tidy up")
    # THEN it goes on, its rows keeping the chain it was held with
    assert d.outcome == "queued", d
    row = engine.log_rows(arrow="e-a2")[-1]
    assert (row["outcome"], row["chain"]) == ("approved", ["c1", "a2"])
