"""Removing an agent ends the prompts it was working on: cancelled, never replied by another.

A delivered prompt of a removed agent is cancelled (PERMISSION_DENIED,
``not-connected``) and logged as a resolution, as its queued ones are; a new
agent that reuses the id is not the one that was asked.

(Found by a helper: the delivered prompt stayed ``delivered`` and the reply of a
new agent with the same id marked it ``replied``.)
"""

from __future__ import annotations

from engine import Engine


async def test_removed_agents_delivered_prompt_is_cancelled_not_replied(world: Engine) -> None:
    # GIVEN a prompt delivered to a1 (it is working on it)
    first = await world.call("c1", "agents.prompt", "a1", {"text": "refactor the parser"})
    assert world.prompt(first.prompt).state == "delivered"
    # WHEN the person removes a1 before it answers, and later adds another agent as a1
    await world.remove_node("a1")
    await world.add_node({"id": "a1", "type": "agent", "name": "someone else"}, workspace="w1")
    await world.add_arrow({"id": "e1b", "from": "c1", "to": "a1"})
    second = await world.call("c1", "agents.prompt", "a1", {"text": "say hello"})
    await world.agent_replied("a1", "hello")
    # THEN the new agent's reply answers the new prompt only
    assert world.prompt(second.prompt).state == "replied"
    old = world.prompt(first.prompt)
    assert (old.state, old.code, old.reason) == ("cancelled", "PERMISSION_DENIED",
                                                 "not-connected"), \
        "the removed agent's unanswered prompt is not cancelled"
    resolutions = [r for r in world.log_rows() if r["outcome"] == "cancelled"]
    assert [r["reason"] for r in resolutions] == ["not-connected"]
