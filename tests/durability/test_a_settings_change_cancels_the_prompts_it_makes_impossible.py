"""Settings that a prompt's checks read, changed, cancel at once the open prompts they
make impossible (SPEC §4.3, §5, §8), as a revoke or an arrow's removal does: a hop limit
lowered below a queued or held prompt's chain (check 9), a ``max_payload`` lowered
below its text (check 3). Cancelled in the change's own write, each with the error a new
prompt would get, its resolution row ``cancelled`` and ``prompt.resolved`` to its card,
so the card and the person learn it when the setting changes, not at a delivery or an
approval that may never come. Another engine on the store sees them cancelled. On
SQLite and PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.durability.test_a_queued_prompt_is_checked_again_at_its_delivery import _two_hops


async def test_a_hop_limit_lowered_cancels_the_prompts_past_it_at_once(
        make_engine: Any, tmp_path: Path) -> None:
    """Hop limit 1: the queued two-hop prompt and a held one are cancelled LOOP_REFUSED
    hop-limit in the change's write; the one-hop prompt stays queued."""
    # GIVEN a queued two-hop prompt to a3, a one-hop one behind it, and a held prompt
    # to the dangerous y1 naming no context (it carries the open call's chain: two hops)
    engine, far, near = await _two_hops(make_engine, tmp_path)
    await engine.add_node({"id": "y1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e-y1", "from": "c1", "to": "y1"})
    held = await engine.call("c1", "agents.prompt", "y1", {"text": "hop 2, held"})
    assert held.outcome == "held" and held.prompt is not None
    assert engine.log_rows(arrow="e-y1")[-1]["chain"] == ["a1", "c1", "a2", "c1", "y1"]
    other = make_engine()  # another server on the store
    sub = engine.subscribe("c1")
    # WHEN a person lowers the hop limit to 1 through the other one
    await other.set_settings("w1", {"hop_limit": 1})
    # THEN both two-hop prompts are cancelled there and then, with the error a new one gets
    for pid, arrow in ((far, "e-a3"), (str(held.prompt), "e-y1")):
        out = other.outcome(pid)
        assert (out.outcome, out.code, out.reason) == ("denied", "LOOP_REFUSED",
                                                       "hop-limit"), pid
        row = other.log_rows(arrow=arrow)[-1]
        assert (row["outcome"], row["code"]) == ("cancelled", "LOOP_REFUSED")
    assert other.prompt(near).state == "queued"
    # AND the first engine, caught up, sees them cancelled and tells its card
    engine.catch_up()
    assert engine.prompt(far).state == "cancelled"  # type: ignore[union-attr]
    told = sorted((e.data.get("prompt"), e.data.get("state"), e.data.get("code"))
                  for e in sub.ready() if e.type == "prompt.resolved")
    assert told == sorted([(far, "cancelled", "LOOP_REFUSED"),
                           (str(held.prompt), "cancelled", "LOOP_REFUSED")]), told


async def test_a_max_payload_lowered_cancels_the_prompts_past_it_at_once(
        make_engine: Any, tmp_path: Path) -> None:
    """max_payload below a queued prompt's text: cancelled INVALID_ARGUMENT at once."""
    # GIVEN two queued prompts to the busy a3
    engine, far, near = await _two_hops(make_engine, tmp_path)
    long = await engine.call("d1", "agents.prompt", "a3", {"text": "x" * 100})
    assert long.outcome == "queued" and long.prompt is not None
    # WHEN max_payload is lowered to 50 bytes
    await engine.set_settings("w1", {"max_payload": 50})
    # THEN the 100-byte prompt is cancelled INVALID_ARGUMENT, the short ones stay queued
    out = engine.outcome(str(long.prompt))
    assert (out.outcome, out.code) == ("denied", "INVALID_ARGUMENT")
    assert engine.log_rows(arrow="d-a3")[-1]["outcome"] == "cancelled"
    assert engine.prompt(far).state == engine.prompt(near).state == "queued"  # type: ignore[union-attr]
