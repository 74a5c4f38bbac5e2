"""SPEC §7, §9, §10: what another engine on the store committed reaches this engine's
drivers and cards as if it had been committed here.

Rule: when an engine catches up with another's commits, the consent and round-trip
changes among them are told here as the engine that made them told its own
listeners: a held prompt approved elsewhere and delivered to an agent this engine
drives reaches that agent's driver (the agent works on it and replies); a hold
answered elsewhere is ``prompt.resolved`` to its card; a tool call opened
elsewhere is ``tool.call`` to its card, and its end ``tool.resolved``; grants
changed elsewhere are ``permissions.changed`` to the package's cards. A change
this engine made itself is told once, never again at a catch-up.

(Found in round 20: events stayed in the process that made them. A person who
approved a hold in ``arrowgate tui`` — another process than the app whose driver
stands behind the agent — saw the prompt marked delivered while the agent never
received it and stayed "working" for good; a card's event stream on the service
never heard of a hold answered or a permission revoked in the TUI; an agent's
tool call through a second server never reached the card listening on the first.)
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import pytest

from engine import Engine
from engine.effects.drivers import ScriptedAgent
from tests.conftest import manifest, offer_install, until


async def _prompter(make_engine: Any, tmp_path: Any) -> Engine:
    app: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await app.create_workspace("w1", tmp_path / "ws")
    await offer_install(app, manifest("acme.p", {"agents.prompt": {}, "agents.output": {}},
                                      tools=["relay"]))
    await app.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await app.add_node({"id": "y1", "type": "agent", "name": "Y", "dangerous": True},
                       workspace="w1")
    await app.add_arrow({"id": "e1", "from": "c1", "to": "y1"})
    return app


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def _driven(app: Engine) -> list[str]:
    """Put a scripted driver behind y1 in ``app``; the texts handed to it, as they come."""
    received: list[str] = []
    driver = ScriptedAgent("y1")
    submit = driver.submit

    def recording(text: str) -> None:
        received.append(text)
        submit(text)

    driver.submit = recording  # type: ignore[method-assign]
    await app.attach_driver("y1", driver)
    return received


async def test_a_hold_approved_elsewhere_reaches_the_agents_driver(
        make_engine: Any, tmp_path: Any) -> None:
    app = await _prompter(make_engine, tmp_path)
    received = await _driven(app)
    held = await app.call("c1", "agents.prompt", "y1", {"text": "clean the build"})
    assert held.outcome == "held", held

    tui = make_engine()  # the person's TUI: another process, no driver
    await tui.approve_hold(str(held.prompt), text_sha256=_digest("clean the build"))

    app.catch_up()
    await until(lambda: received == ["clean the build"])
    await until(lambda: app.prompt(str(held.prompt)).state == "replied")  # type: ignore[union-attr]
    # The scripted agent's reply to that very text.
    assert app.state.canvas.node("y1").data["last_reply"] == "done: clean the build"  # type: ignore[union-attr]
    assert received == ["clean the build"], "handed to the driver more than once"


async def test_a_hold_answered_elsewhere_is_told_to_its_card(
        make_engine: Any, tmp_path: Any) -> None:
    app = await _prompter(make_engine, tmp_path)
    first = await app.call("c1", "agents.prompt", "y1", {"text": "one"})
    second = await app.call("c1", "agents.prompt", "y1", {"text": "two"})
    sub = app.subscribe("c1")

    tui = make_engine()
    await tui.reject_hold(str(first.prompt))
    await tui.approve_hold(str(second.prompt), text_sha256=_digest("two"))

    app.catch_up()
    resolved = [(e.data["prompt"], e.data["state"], e.data["code"])
                for e in sub.ready() if e.type == "prompt.resolved"]
    assert resolved == [(first.prompt, "rejected", "PROMPT_REJECTED"),
                        (second.prompt, "approved", None)]
    app.catch_up()
    assert [e for e in sub.ready() if e.type == "prompt.resolved"] == [], "told twice"


async def test_a_tool_call_made_elsewhere_is_told_to_its_card(
        make_engine: Any, tmp_path: Any) -> None:
    app = await _prompter(make_engine, tmp_path)
    await app.add_node({"id": "a1", "type": "agent", "name": "A"}, workspace="w1")
    await app.add_arrow({"id": "e2", "from": "a1", "to": "c1"})
    sub = app.subscribe("c1")

    server_b = make_engine()
    opened = await server_b.tool("a1", "c1", "relay", {})
    assert opened.allowed, opened
    call_id = opened.value["id"]

    app.catch_up()
    calls = [e.data for e in sub.ready() if e.type == "tool.call"]
    assert calls == [{"id": call_id, "agent": "a1", "tool": "relay",
                      "args": {}, "chain": ["a1", "c1"]}]

    await server_b.cancel_tool(call_id, by="agent:a1")
    app.catch_up()
    ended = [e.data for e in sub.ready() if e.type == "tool.resolved"]
    assert ended == [{"id": call_id, "state": "cancelled", "code": "TOOL_CANCELLED"}]


async def test_grants_changed_elsewhere_are_told_to_the_packages_cards(
        make_engine: Any, tmp_path: Any) -> None:
    app = await _prompter(make_engine, tmp_path)
    sub = app.subscribe("c1")

    tui = make_engine()
    await tui.revoke("acme.p", "agents.output")

    app.catch_up()
    changed = [e.data for e in sub.ready() if e.type == "permissions.changed"]
    assert changed == [{"package": "acme.p", "granted": ["agents.prompt"]}]


async def test_what_this_engine_made_is_told_once(make_engine: Any, tmp_path: Any) -> None:
    app = await _prompter(make_engine, tmp_path)
    held = await app.call("c1", "agents.prompt", "y1", {"text": "one"})
    sub = app.subscribe("c1")
    other = make_engine()
    other.catch_up()
    await app.reject_hold(str(held.prompt))
    await app.revoke("acme.p", "agents.output")
    # The other engine commits something unrelated: this one catches up with it.
    await other.add_node({"id": "n1", "type": "note"}, workspace="w1")
    app.catch_up()
    told = [e.type for e in sub.ready()]
    assert told.count("prompt.resolved") == 1, told
    assert told.count("permissions.changed") == 1, told


async def test_an_app_running_its_timers_hands_a_prompt_approved_elsewhere_on(
        make_engine: Any, tmp_path: Any) -> None:
    """No call of the app's own is needed: its timers catch up (`Engine.run_timers`)."""
    app = await _prompter(make_engine, tmp_path)
    received = await _driven(app)
    held = await app.call("c1", "agents.prompt", "y1", {"text": "deploy"})
    stop = asyncio.Event()
    timers = asyncio.ensure_future(app.run_timers(stop, every=0.05))
    try:
        tui = make_engine()
        await tui.approve_hold(str(held.prompt), text_sha256=_digest("deploy"))
        await until(lambda: received == ["deploy"])
    finally:
        stop.set()
        await timers


async def test_timers_refuse_an_interval_that_is_not_a_positive_time(
        make_engine: Any) -> None:
    app: Engine = make_engine()
    for every in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="every"):
            await app.run_timers(asyncio.Event(), every=every)


async def test_what_moved_is_told_when_the_catch_up_reloads_everything(
        make_engine: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Too far behind to apply change by change, the engine loads the state again and
    tells what moved between the two (`engine.core.elsewhere.between`)."""
    import engine.store.pg.store as pg_store
    import engine.store.sqlite as sqlite_store

    app = await _prompter(make_engine, tmp_path)
    received = await _driven(app)
    held = await app.call("c1", "agents.prompt", "y1", {"text": "deploy"})
    sub = app.subscribe("c1")
    reloads = app.store.reloads

    tui = make_engine()
    await tui.approve_hold(str(held.prompt), text_sha256=_digest("deploy"))
    await tui.revoke("acme.p", "agents.output")
    for module in (sqlite_store, pg_store):
        monkeypatch.setattr(module, "MAX_CATCH_UP", 0)  # every change: too many
    app.catch_up()
    assert app.store.reloads == reloads + 1, "the catch-up did not load everything again"
    told = [(e.type, e.data.get("state") or e.data.get("status")) for e in sub.ready()]
    assert told == [("agents.status", "working"), ("permissions.changed", None),
                    ("prompt.resolved", "approved"), ("agents.turn", "delivered")], told
    await until(lambda: received == ["deploy"])


async def test_agents_added_removed_and_working_elsewhere_are_told_to_the_cards(
        make_engine: Any, tmp_path: Any) -> None:
    """A card with ``agents.read`` hears of its workspace's agents whichever process
    changed them (SPEC §3): ``agents.changed`` and ``agents.status``."""
    app = await _prompter(make_engine, tmp_path)
    sub = app.subscribe("c1")
    other = make_engine()

    def told() -> list[tuple[str, Any, Any]]:
        app.catch_up()
        return [(e.type, e.data.get("agent"), e.data.get("change") or e.data.get("status"))
                for e in sub.ready() if e.type.startswith("agents.")]

    await other.add_node({"id": "a8", "type": "agent", "name": "Eight"}, workspace="w1")
    assert told() == [("agents.changed", "a8", "added")]
    await other.add_arrow({"id": "e8", "from": "c1", "to": "a8"})
    await other.call("c1", "agents.prompt", "a8", {"text": "work"})  # delivered: a8 works
    assert ("agents.status", "a8", "working") in told()
    await other.remove_node("a8")
    assert told() == [("agents.changed", "a8", "removed")]
    # An agent that came and went between two catch-ups was never seen here: not told.
    await other.add_node({"id": "a9", "type": "agent", "name": "Nine"}, workspace="w1")
    await other.remove_node("a9")
    assert told() == []
