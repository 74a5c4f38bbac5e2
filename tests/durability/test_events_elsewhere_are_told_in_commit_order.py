"""SPEC §3, §10: what another engine committed is told here in the order it was committed.

Rule: an engine catching up with another's commits tells its cards (and drivers)
the events those commits stand for in the order the store recorded them (its
change sequence), whatever their kinds: a tool call opened before a prompt was
held is told before ``prompt.held``; holds answered one after the other are told
answered in that order, not in the order the prompts were made; a revoke after
them is told after them; an agent added is told before a turn it then began.

(Found in round 23: the catch-up told events grouped by kind — agents, then
grants, then prompts by creation, then tool calls — so a card on the service heard
``prompt.held`` before the ``tool.call`` opened ahead of it, a later revoke before
the holds answered ahead of it, and two answers in the order their prompts came.)
"""

from __future__ import annotations

from typing import Any

from engine import Engine
from tests.conftest import manifest, offer_install


async def _wired(make_engine: Any, tmp_path: Any) -> Engine:
    """Card c1 prompts dangerous agent y1 (held) and serves tool ``relay`` to agent a1."""
    app: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    await offer_install(app, manifest("acme.p", {"agents.prompt": {}, "agents.output": {}},
                                      tools=["relay"]))
    await app.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await app.add_node({"id": "y1", "type": "agent", "name": "Y", "dangerous": True},
                       workspace="w1")
    await app.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await app.add_arrow({"id": "e1", "from": "c1", "to": "y1"})
    await app.add_arrow({"id": "e2", "from": "a1", "to": "c1"})
    return app


def _said(e: Any) -> tuple[str, str]:
    data = e.data
    return e.type, str(data.get("prompt") or data.get("id") or data.get("package")
                       or data.get("agent"))


async def test_events_of_one_catch_up_are_told_in_commit_order(
        make_engine: Any, tmp_path: Any) -> None:
    app = await _wired(make_engine, tmp_path)
    first = await app.call("c1", "agents.prompt", "y1", {"text": "one"})
    second = await app.call("c1", "agents.prompt", "y1", {"text": "two"})
    assert first.outcome == second.outcome == "held"
    sub = app.subscribe("c1")

    other = make_engine()  # another server on the store
    opened = await other.tool("a1", "c1", "relay", {})
    assert opened.allowed, opened
    third = await other.call("c1", "agents.prompt", "y1", {"text": "three"})
    assert third.outcome == "held", third
    await other.reject_hold(str(second.prompt))
    await other.reject_hold(str(first.prompt))
    await other.revoke("acme.p", "agents.output")

    app.catch_up()
    told = [_said(e) for e in sub.ready()]
    assert told == [("tool.call", opened.value["id"]),
                    ("prompt.held", str(third.prompt)),
                    ("prompt.resolved", str(second.prompt)),
                    ("prompt.resolved", str(first.prompt)),
                    ("permissions.changed", "acme.p")], told


async def test_an_agent_added_is_told_before_the_turn_it_began(
        make_engine: Any, tmp_path: Any) -> None:
    app: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    await offer_install(app, manifest("acme.r", {"agents.prompt": {}, "agents.read": {}}))
    await app.add_node({"id": "c1", "type": "card", "package": "acme.r"}, workspace="w1")
    sub = app.subscribe("c1")

    other = make_engine()
    await other.add_node({"id": "a2", "type": "agent", "name": "B"}, workspace="w1")
    await other.add_arrow({"id": "e3", "from": "c1", "to": "a2"})
    sent = await other.call("c1", "agents.prompt", "a2", {"text": "go"})
    assert sent.value["state"] == "delivered", sent
    await other.agent_replied("a2", "went")

    app.catch_up()
    told = [(e.type, e.data.get("change") or e.data.get("state") or e.data.get("status"))
            for e in sub.ready() if e.data.get("agent") == "a2"]
    assert told[0] == ("agents.changed", "added"), told
    turns = [t for t in told if t[0] == "agents.turn"]
    assert turns == [("agents.turn", "delivered"), ("agents.turn", "replied")], told
