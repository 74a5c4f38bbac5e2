"""SPEC §8: each row names its card, and a card's suppressed refusals are summed up
"before that card's next logged row". Node ids have no length bound, but a refusal's
row cuts the card id to 1,024 characters plus "…" (Recorder._shown,
engine/services/record.py ~line 309, meant for names a card makes up): for a real card
on the canvas with a longer id, `log_rows(card=ID)` / `log show --card ID` miss its
refusals, and `log_row` looks the cut name up in DenialLog.held (keyed by the real
id), so its `suppressed` row is not written before its next refused row."""

from __future__ import annotations

from typing import Any

LONG = "c" * 1100


async def _long_card(world: Any) -> None:
    await world.add_node({"id": LONG, "type": "card", "package": "acme.prompter"},
                         workspace="w1")
    await world.add_arrow({"id": "eL", "from": LONG, "to": "a1"})


async def test_the_card_filter_finds_every_row_of_a_card_with_a_long_id(world: Any) -> None:
    await _long_card(world)
    await world.call(LONG, "clipboard.copyText", None, {"text": "x"})  # not granted
    await world.call(LONG, "agents.prompt", "a1", {"text": "hi"})  # queued
    outcomes = [r["outcome"] for r in world.log_rows(card=LONG)]
    # Today: ["queued"]; the denied row names "ccc…c…" instead.
    assert outcomes == ["denied", "queued"], outcomes


async def test_its_suppressed_row_comes_before_its_next_refused_row(world: Any,
                                                                    clock: Any) -> None:
    await _long_card(world)
    await world.set_settings("w1", {"denial_log_limit": 2})
    for _ in range(4):  # 2 logged, 2 suppressed
        await world.call(LONG, "clipboard.copyText", None, {"text": "x"})
    clock.t += 61
    await world.call(LONG, "clipboard.copyText", None, {"text": "x"})  # logged again
    outcomes = [r["outcome"] for r in world.log_rows()]
    # Today: ["denied", "denied", "denied"]: the summary is still held in memory.
    assert outcomes == ["denied", "denied", "suppressed", "denied"], outcomes
