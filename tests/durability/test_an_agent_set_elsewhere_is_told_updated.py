"""SPEC §3, §10: an operator's change to an agent or terminal is told to the cards of its
workspace whichever process made it.

Rule: ``node.set`` on an agent or terminal sends ``agents.changed`` with ``change:
updated`` to the cards that may read the agents; an engine catching up with
another's ``node.set`` tells its cards the same, once. What the engine itself
writes on the node as it runs (its status, screen, last reply, chain, exit code)
is no update of the operator's: it is told as it is (``agents.status``), or not.

(Found in round 21: a catch-up told agents added, removed and working, never
updated: a card listening on the service never heard that the operator renamed an
agent in the app.)
"""

from __future__ import annotations

from typing import Any

from engine import Engine
from tests.durability.wiring import wire_agent


async def test_an_agent_set_in_another_process_is_told_updated_once(
        open_engine: Any, tmp_path: Any) -> None:
    app: Engine = open_engine()
    sub = await wire_agent(app, tmp_path)

    def changed() -> list[dict[str, Any]]:
        app.catch_up()
        return [e.data for e in sub.ready() if e.type in ("agents.changed", "agents.status")]

    other: Engine = open_engine()
    await other.set_node("a1", {"name": "Builder"})
    assert changed() == [{"agent": "a1", "workspace": "w1", "kind": "agent",
                          "change": "updated"}]
    assert changed() == [], "told twice"

    # A prompt delivered there changes the node's status and chain: not an update.
    sent = await other.call("c1", "agents.prompt", "a1", {"text": "build"})
    assert sent.allowed, sent
    assert changed() == [{"agent": "a1", "workspace": "w1", "status": "working"}]
