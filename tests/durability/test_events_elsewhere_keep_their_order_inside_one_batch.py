"""SPEC §3, §10: what another engine committed in one batch is told in the order it was done.

Rule: a catch-up tells what an entity came to (a prompt's turn replied, a hold answered,
a tool call ended, a status, grants) where the entity's *last* change stands in what the
store recorded, also when one group commit (one batch) holds several operations: a
prompt approved, another rejected, then the first one's turn replied is told in that
order on both stores.

(Found in round 23: PostgreSQL records each batch's entities once, where each was first
touched, so everything a batch did to an entity was placed at its first touch: the
reply to a prompt approved earlier in the batch was told before a hold rejected between
the two. SQLite's feed has a row per write and told them in order.)
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from engine import Engine
from tests.conftest import manifest, offer_install


async def test_one_batchs_later_change_of_an_entity_is_told_after_what_came_between(
        make_engine: Any, tmp_path: Any) -> None:
    app: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    await offer_install(app, manifest("acme.p", {"agents.prompt": {}, "agents.read": {}}))
    await app.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await app.add_node({"id": "y1", "type": "agent", "name": "Y", "dangerous": True},
                       workspace="w1")
    await app.add_arrow({"id": "e1", "from": "c1", "to": "y1"})
    first = await app.call("c1", "agents.prompt", "y1", {"text": "one"})
    second = await app.call("c1", "agents.prompt", "y1", {"text": "two"})
    assert first.outcome == second.outcome == "held"
    sub = app.subscribe("c1")

    other = make_engine()  # another server on the store
    digest = hashlib.sha256(b"one").hexdigest()
    commits = other.commits
    # One group commit: the three operations start in this order in one turn of the loop.
    await asyncio.gather(other.approve_hold(str(first.prompt), text_sha256=digest),
                         other.reject_hold(str(second.prompt)),
                         other.agent_replied("y1", "done"))
    assert other.commits - commits == 1, "the three operations did not share a batch"
    assert other.prompt(str(first.prompt)).state == "replied"

    app.catch_up()
    told = [(e.type, str(e.data.get("prompt") or ""), str(e.data.get("state") or ""))
            for e in sub.ready() if e.type in ("prompt.resolved", "agents.turn")]
    assert told == [("prompt.resolved", str(first.prompt), "approved"),
                    ("agents.turn", str(first.prompt), "delivered"),
                    ("prompt.resolved", str(second.prompt), "rejected"),
                    ("agents.turn", "", "replied")], told
