"""SPEC §8: each row names its card. A card the canvas holds is named whole in its
refusal rows, however long its id, so the card filter finds them and its `suppressed`
row comes before its next logged row; only names no node has (made up by a card) are
cut to 1,024 characters.

(Found by a helper: Recorder._shown cut every name over 1,024 characters, real card
ids too: `log_rows(card=ID)` missed the refusals of a card with a longer id, and its
summary of suppressed refusals stayed in memory past its next refused row.)"""

from __future__ import annotations

from typing import Any

LONG = "c" * 1100


async def _long_card(world: Any) -> None:
    await world.add_node({"id": LONG, "type": "card", "package": "acme.prompter"},
                         workspace="w1")
    await world.add_arrow({"id": "eL", "from": LONG, "to": "a1"})


async def test_the_card_filter_finds_every_row_of_a_card_with_a_long_id(world: Any) -> None:
    """Its refused row and its queued row both carry its id whole."""
    await _long_card(world)
    await world.call(LONG, "clipboard.copyText", None, {"text": "x"})  # not granted
    await world.call(LONG, "agents.prompt", "a1", {"text": "hi"})  # queued
    outcomes = [r["outcome"] for r in world.log_rows(card=LONG)]
    assert outcomes == ["denied", "queued"], outcomes


async def test_its_suppressed_row_comes_before_its_next_refused_row(world: Any,
                                                                    clock: Any) -> None:
    """The summary of its suppressed refusals is written before its next row."""
    await _long_card(world)
    await world.set_settings("w1", {"denial_log_limit": 2})
    for _ in range(4):  # 2 logged, 2 suppressed
        await world.call(LONG, "clipboard.copyText", None, {"text": "x"})
    clock.t += 61
    await world.call(LONG, "clipboard.copyText", None, {"text": "x"})  # logged again
    outcomes = [r["outcome"] for r in world.log_rows()]
    assert outcomes == ["denied", "denied", "suppressed", "denied"], outcomes


async def test_a_long_name_no_node_has_is_still_cut(world: Any) -> None:
    """A card name the canvas does not hold, and a target no node has, stay cut."""
    made_up = "m" * 5000
    await world.call(made_up, "clipboard.copyText", "t" * 5000, {"text": "x"})
    row = world.log_rows()[-1]
    assert row["card"] == made_up[:1024] + "…", len(row["card"])
    assert row["target"] == "t" * 1024 + "…", len(row["target"])


async def test_a_long_target_the_canvas_holds_is_named_whole(world: Any) -> None:
    """A refusal toward a node with a long id names that node whole, as its card."""
    agent = "a" * 1100
    await world.add_node({"id": agent, "type": "agent"}, workspace="w1")
    decision = await world.call("c1", "agents.prompt", agent, {"text": "hi"})  # no arrow
    assert decision.outcome == "denied", decision
    assert world.log_rows()[-1]["target"] == agent
