"""SPEC §9: a prompt made without naming a context while the card has tool calls
open is checked against every open call's chain. Lowering the workspace's
tool_timeout must not hide a tool call that is still open from that check."""

from __future__ import annotations

from typing import Any


async def test_unnamed_prompt_still_checked_against_open_tool_call(world: Any, clock: Any) -> None:
    engine = world
    opened = await engine.tool("a1", "c1", "relay")
    tc = opened.value["id"]
    refused = await engine.call("c1", "agents.prompt", "a1", {"text": "x"})
    assert (refused.code, refused.reason) == ("LOOP_REFUSED", "cycle")

    await engine.set_settings("w1", {"tool_timeout": 5})
    clock.t += 10
    # The tool call is still open: the card may still answer it, and a call
    # naming it as its context still carries its chain.
    assert engine.tool_call(tc).state == "open"
    named = await engine.call("c1", "agents.prompt", "a1", {"text": "x"}, context=tc)
    assert (named.code, named.reason) == ("LOOP_REFUSED", "cycle")
    # So the same prompt without naming it must be refused too (the loop guard
    # does not depend on the card's honesty).
    unnamed = await engine.call("c1", "agents.prompt", "a1", {"text": "x"})
    assert (unnamed.code, unnamed.reason) == ("LOOP_REFUSED", "cycle"), unnamed.message
