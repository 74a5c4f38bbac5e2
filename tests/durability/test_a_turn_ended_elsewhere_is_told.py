"""SPEC §3, §10: an agent's turn is told to the cards of its workspace whichever process
delivered the prompt and took the reply.

Rule: ``agents.turn`` goes to the cards that may read the agents (``agents.read``)
when a prompt is delivered (``state: delivered``, with the prompt) and when the
agent replies (``state: replied``), as the engine that made the change tells its
own cards; an engine catching up with another's commits tells its cards the same
events, once.

(Found in round 20: a catch-up told ``agents.turn`` delivered but never replied:
a card listening on the service heard its agent start a turn in the app's process
and never end it.)
"""

from __future__ import annotations

from typing import Any

from engine import Engine
from tests.durability.wiring import wire_agent


async def test_a_turn_delivered_and_replied_elsewhere_is_told_to_the_cards(
        make_engine: Any, tmp_path: Any) -> None:
    app: Engine = make_engine()
    sub = await wire_agent(app, tmp_path)

    def turns() -> list[dict[str, Any]]:
        app.catch_up()
        return [e.data for e in sub.ready() if e.type == "agents.turn"]

    other = make_engine()  # the app whose driver stands behind a1: another process
    sent = await other.call("c1", "agents.prompt", "a1", {"text": "build"})
    assert sent.value["state"] == "delivered", sent
    assert turns() == [{"agent": "a1", "workspace": "w1", "prompt": sent.prompt,
                        "state": "delivered"}]
    await other.agent_replied("a1", "built")
    assert turns() == [{"agent": "a1", "workspace": "w1", "state": "replied"}]
    assert turns() == [], "told twice"

    # Delivered and replied between two catch-ups: both told, in order.
    again = await other.call("c1", "agents.prompt", "a1", {"text": "test"})
    await other.agent_replied("a1", "tested")
    assert turns() == [{"agent": "a1", "workspace": "w1", "prompt": again.prompt,
                        "state": "delivered"},
                       {"agent": "a1", "workspace": "w1", "state": "replied"}]
