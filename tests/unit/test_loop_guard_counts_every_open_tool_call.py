"""The loop guard counts every tool call that is open (SPEC §9).

Rule: a prompt a card makes without naming a context is checked against the
chain of every one of its tool calls whose state is ``open`` — the same notion
of open that lets the card answer the call or name it as a context. A call
closes at its stored deadline (or when answered, failed or cancelled), so
lowering the workspace's ``tool_timeout`` afterwards does not hide it from the
guard.

(Found by a helper: the guard re-derived "open" from the current
``tool_timeout``, so after lowering it an unnamed prompt slipped past the guard
while the same prompt naming the still-open call was refused as a cycle.)
"""

from __future__ import annotations

from typing import Any


async def test_lowered_tool_timeout_keeps_open_call_in_loop_guard(world: Any, clock: Any) -> None:
    """An open tool call past the lowered tool_timeout still refuses an unnamed prompt back."""
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

    # WHEN its stored deadline passes THEN it expires and no longer bounds the card.
    clock.t = engine.tool_call(tc).deadline
    after = await engine.call("c1", "agents.prompt", "a1", {"text": "x"})
    assert engine.tool_call(tc).state == "expired"
    assert after.outcome == "queued", after.message
