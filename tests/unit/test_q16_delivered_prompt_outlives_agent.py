"""q16: a prompt delivered to an agent that is then removed is later marked ``replied``
by the reply of a *new* agent that reuses the id.

Removing a node cancels only open (queued/held) prompts (`Prompts.revalidate`);
a ``delivered`` prompt stays ``delivered`` in the PromptIndex under the agent's
id (engine/core/prompts.py `PromptIndex.update` tracks it by id only). When a
node with the same id is added again, `Prompts.agent_replied`
(engine/services/prompts.py, the loop over ``of_agent(agent, "delivered")``)
marks every delivered prompt of that id ``replied`` — including the one the
removed agent never answered. A card polling its prompt (GET /v1/prompts/{id}
or its wait) sees ``replied`` and reads agents.lastReply, which is the new
agent's answer to some other prompt. Node tokens are revoked on removal for
exactly this reason (a new node with the same id is not the old one).
"""

from __future__ import annotations

from engine import Engine


async def test_reply_of_a_new_agent_does_not_answer_the_old_agents_prompt(world: Engine) -> None:
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
    assert world.prompt(first.prompt).state != "replied", \
        "the removed agent's unanswered prompt shows as replied by the new agent"
