"""At a hold's approval check 9 is the loop guard as it stands (SPEC §7, §9): a prompt held
two hops down a chain, whose workspace's ``hop_limit`` was lowered to 1 while it waited,
is refused ``LOOP_REFUSED`` reason ``hop-limit`` at the approval and logged ``cancelled``
with that code, on SQLite and on PostgreSQL.

A change an engine makes to the settings cancels such a prompt at once (round 32,
tests/durability/test_a_settings_change_cancels_the_prompts_it_makes_impossible.py); the
approval's own check is for a change no re-check followed: here the hop limit lowered in
the store while no engine ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import manifest, offer_install
from tests.durability.targets import Target


async def test_a_chain_past_a_lowered_hop_limit_is_refused_at_approval(
        make_engine: Any, target: Target, tmp_path: Path) -> None:
    """a1 → c1 → a2 → c2 → y3 (dangerous): held at hop 2; hop_limit lowered to 1 once
    both tool calls were answered; approved: cancelled LOOP_REFUSED hop-limit."""
    engine = make_engine()
    try:
        # GIVEN a prompt held at the second hop of a chain
        (tmp_path / "ws").mkdir()
        await engine.create_workspace("w1", tmp_path / "ws")
        for name in ("acme.p", "acme.q"):
            await offer_install(engine, manifest(name, {"agents.prompt": {}},
                                                 tools=["relay"]))
        for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                     {"id": "c2", "type": "card", "package": "acme.q"},
                     {"id": "a1", "type": "agent"}, {"id": "a2", "type": "agent"},
                     {"id": "y3", "type": "agent", "dangerous": True}):
            await engine.add_node(node, workspace="w1")
        for i, (one, other) in enumerate((("a1", "c1"), ("c1", "a2"), ("a2", "c2"),
                                          ("c2", "y3"))):
            await engine.add_arrow({"id": f"e{i}", "from": one, "to": other})
        outer = (await engine.tool("a1", "c1", "relay")).value["id"]
        hop1 = await engine.call("c1", "agents.prompt", "a2", {"text": "one"}, context=outer)
        assert hop1.allowed, hop1
        inner = (await engine.tool("a2", "c2", "relay")).value["id"]
        held = await engine.call("c2", "agents.prompt", "y3", {"text": "two"}, context=inner)
        assert held.outcome == "held" and held.prompt is not None, held
        pid = held.prompt
        assert engine.prompt(pid).chain == ["a1", "c1", "a2", "c2", "y3"]
        for call, card in ((inner, "c2"), (outer, "c1")):
            await engine.answer_tool(call, result="done", by=f"card:{card}")
        # WHEN the hop limit is lowered to 1 in the store while no engine runs (it stays
        # held: no re-check followed) and a person approves it
        engine.close()
        target.execute({
            "sqlite": "update workspaces set settings = json_set(settings, '$.hop_limit', 1)",
            "postgresql": "update workspaces set settings = "
                          "jsonb_set(settings::jsonb, '{hop_limit}', '1')::text"})
        engine = make_engine()
        assert engine.prompt(pid).state == "held"
        answer = await engine.approve_hold(pid, text_sha256=engine.prompt(pid).text_sha256)
        # THEN it is refused as the loop guard refuses it now, and logged so
        assert (answer.outcome, answer.code, answer.reason) == (
            "denied", "LOOP_REFUSED", "hop-limit"), answer
        rows = [r for r in engine.log_rows(arrow="e3") if r["prompt"] == pid]
        assert [(r["outcome"], r["code"], r["reason"]) for r in rows] == [
            ("held", None, None), ("cancelled", "LOOP_REFUSED", "hop-limit")]
    finally:
        engine.close()
