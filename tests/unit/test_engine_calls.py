"""The decision pipeline through the engine's API: order, messages, effects."""

from __future__ import annotations

import pytest

from engine import CallDenied, Engine
from tests.conftest import polls

from ..conftest import manifest, offer_install


async def test_messages_say_what_would_allow_the_call(world: Engine) -> None:
    """A refusal's message names the fix: an arrow to draw or a grant to give."""
    d = await world.call("c1", "agents.prompt", "a2", {"text": "hi"})
    assert (d.outcome, d.code, d.reason) == ("denied", "PERMISSION_DENIED", "not-connected")
    assert "draw an arrow between c1 and a2" in d.message
    d = await world.call("c1", "clipboard.copyText", None, {"text": "x"})
    assert d.reason == "not-granted" and "grant clipboard.write to acme.prompter" in d.message
    d = await world.call("c1", "agents.prompt", "t1", {"text": "ls"})
    assert d.message.startswith("PERMISSION_DENIED: card c1 (acme.prompter) may not "
                                "agents.prompt t1: wrong-target")
    with pytest.raises(CallDenied) as err:
        d.raise_for_outcome()
    assert err.value.code == "PERMISSION_DENIED" and err.value.to_json()["reason"] == "wrong-target"


async def test_checks_run_in_spec_order(world: Engine) -> None:
    """An unknown call beats bad arguments; bad arguments beat missing grants."""
    assert (await world.call("c1", "made.up")).code == "UNKNOWN_CALL"
    d = await world.call("c1", "agents.prompt", "a1", {"txt": "x"})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "txt")
    d = await world.call("c1", "agents.prompt", "a1", {"text": 5})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "text")
    d = await world.call("c1", "canvas.spawn", None, {"kind": "robot"})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "kind")
    # Undeclared (canvas.spawn is not in the manifest) comes before not-granted.
    d = await world.call("c1", "canvas.spawn", None, {"kind": "note"})
    assert (d.code, d.reason, d.permission) == ("PERMISSION_DENIED", "not-declared", "canvas.spawn")
    assert (await world.call("nobody", "agents.list")).code == "CARD_UNKNOWN"
    assert (await world.call("a1", "agents.list")).code == "CARD_UNKNOWN"


async def test_a_denied_call_writes_only_its_log_row(world: Engine) -> None:
    """Refused calls change nothing and never count toward a rate limit."""
    before = world.db.execute("select count(*) from rate_events").fetchone()[0]
    rows = len(world.log_rows())
    for _ in range(10):
        await world.call("c1", "agents.prompt", "a2", {"text": "no arrow"})
    assert world.db.execute("select count(*) from rate_events").fetchone()[0] == before
    assert len(world.log_rows()) == rows + 10
    assert world.prompts() == []


async def test_prompts_queue_in_order_and_deliver_when_the_agent_waits(world: Engine) -> None:
    """Queued prompts are delivered one by one, in order, as the agent finishes turns."""
    await world.set_node("a1", {"status": "working"})
    ids = [(await world.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})).prompt
           for i in range(3)]
    assert [world.prompt(i).state for i in ids] == ["queued"] * 3
    await world.set_node("a1", {"status": "waiting"})
    assert [world.prompt(i).state for i in ids] == ["delivered", "queued", "queued"]
    await world.agent_replied("a1", "done")
    assert [world.prompt(i).state for i in ids] == ["replied", "delivered", "queued"]
    assert world.state.canvas.node("a1").data["last_reply"] == "done"


async def test_queue_full_at_twenty_undelivered(world: Engine, clock) -> None:
    """An agent's queue holds 20 undelivered prompts; the 21st is QUEUE_FULL and not counted."""
    await world.set_node("a1", {"status": "working"})
    for i in range(20):
        clock.t += 11  # stay under 6 a minute
        assert (await world.call("c1", "agents.prompt", "a1", {"text": str(i)})).outcome == "queued"
    clock.t += 11
    d = await world.call("c1", "agents.prompt", "a1", {"text": "one more"})
    assert d.code == "QUEUE_FULL"
    assert world.state.counters.retry_after("c1", "prompt", clock.t) is None


async def test_terminal_commands_and_screens(world: Engine) -> None:
    """terminals.run types a command on the screen; readScreen needs agents.output."""
    assert (await world.call("c1", "terminals.run", "t1", {"command": "make test"})).outcome == "ok"
    await world.terminal_output("t1", "ok\n", exit=0)
    assert world.state.canvas.node("t1").data["screen"] == "$ make test\nok\n"
    d = await world.call("c1", "agents.readScreen", "t1")
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-declared")


async def test_note_content_through_calls_and_ports(world: Engine) -> None:
    """cards.note.append adds a line; the note's content is what read returns."""
    await world.call("c1", "cards.note.append", "n1", {"text": "one"})
    await world.call("c1", "cards.note.append", "n1", {"text": "two"})
    assert (await world.call("c1", "cards.note.read", "n1")).value == "one\ntwo"
    assert (await world.call("c1", "cards.todo.add", "n1", {"text": "x"})).reason == "wrong-target"


async def test_spawn_caps(make_engine, tmp_path, clock) -> None:
    """At most 4 spawns a minute, 4 live spawned cards, and the workspace card cap."""
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path, settings={"card_cap": 6})
    await offer_install(engine, manifest("acme.spawn", {"canvas.spawn": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.spawn"}, workspace="w1")
    made = [(await engine.call("c1", "canvas.spawn", None, {"kind": "note"})).value
            for _ in range(4)]
    assert made == ["c1.note1", "c1.note2", "c1.note3", "c1.note4"]
    assert engine.state.canvas.arrow_between("c1", "c1.note1") is not None
    d = await engine.call("c1", "canvas.spawn", None, {"kind": "note"})
    assert d.code == "RATE_LIMITED" and d.retry_after == 60
    clock.t += 60
    assert (await engine.call("c1", "canvas.spawn", None, {"kind": "note"})).reason == "spawn-cap"
    await engine.remove_node("c1.note1")
    await engine.remove_node("c1.note2")
    await engine.add_node({"id": "x1", "type": "sticky"}, workspace="w1")
    await engine.add_node({"id": "x2", "type": "sticky"}, workspace="w1")
    assert (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value == "c1.self1"
    assert (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).reason == "card-cap"


async def test_clipboard_once_a_second(world: Engine, clock) -> None:
    """clipboard.copyText is limited to one per second per card."""
    await world.grant("acme.prompter", "clipboard.write")
    assert (await world.call("c1", "clipboard.copyText", None, {"text": "a"})).outcome == "ok"
    assert (await world.call("c1", "clipboard.copyText", None, {"text": "b"})).code == "RATE_LIMITED"
    clock.t += 1
    assert (await world.call("c1", "clipboard.copyText", None, {"text": "c"})).outcome == "ok"
    assert world.world.clipboard_texts == ["a", "c"]


async def test_fetch_scope_checks_before_any_request(world: Engine, make_engine, tmp_path) -> None:
    """Undeclared fetches are not-declared network; local hosts need network.local."""
    d = await world.call("c1", "net.fetch", None, {"url": "https://api.github.com"})
    assert (d.code, d.reason, d.permission) == ("PERMISSION_DENIED", "not-declared", "network")
    await offer_install(world, manifest("acme.net", {"network": {"hosts": ["api.github.com"]}}))
    await world.add_node({"id": "c2", "type": "card", "package": "acme.net"}, workspace="w1")
    for url, reason in (("http://api.github.com/", "plain-http"),
                        ("https://gist.github.com/", "host-not-declared"),
                        ("http://localhost:8000/", "host-not-declared"),
                        ("ftp://api.github.com/", "bad-url")):
        d = await world.call("c2", "net.fetch", None, {"url": url})
        assert (d.code, d.reason) == ("SCOPE_REFUSED", reason), url
    # Without a confined transport the engine refuses rather than fetch unconfined.
    d = await world.call("c2", "net.fetch", None, {"url": "https://API.github.com./zen"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "unavailable")


async def test_at_most_eight_background_cards_least_recently_seen_suspended(
        make_engine, tmp_path, clock) -> None:
    """Hidden workspaces keep 8 granted background cards running; the older ones suspend."""
    engine = make_engine()
    await engine.create_workspace("w1", tmp_path)
    (tmp_path / "b").mkdir()
    await engine.create_workspace("w2", tmp_path / "b")
    await offer_install(engine, manifest("acme.bg", {"background": {}}))
    await offer_install(engine, manifest("acme.fg", {}))
    for i in range(10):
        await engine.add_node({"id": f"c{i}", "type": "card", "package": "acme.bg",
                               "background": True}, workspace="w1")
        clock.t += 1
        engine.card_seen(f"c{i}")
    await engine.add_node({"id": "f1", "type": "card", "package": "acme.fg", "background": True},
                          workspace="w1")
    await engine.add_node({"id": "v1", "type": "card", "package": "acme.fg"}, workspace="w2")
    status = engine.set_workspace_hidden("w1", True)
    assert status["v1"] == "running" and status["f1"] == "suspended"
    assert [c for c in sorted(status) if status[c] == "suspended" and c != "f1"] == ["c0", "c1"]
    assert sum(1 for s in status.values() if s == "background") == 8
    await engine.revoke("acme.bg", "background")
    assert engine.background()["c9"] == "suspended"
    assert engine.set_workspace_hidden("w1", False)["c0"] == "running"


async def test_budget_paces_delivery_without_refusing(make_engine, tmp_path, clock) -> None:
    """Past the workspace budget, prompts wait in the queue and are delivered later."""
    import asyncio

    engine = make_engine()
    # Paced on the engine's clock (the store's bucket, `engine.core.budget`):
    # two at once, then one a second.
    await engine.create_workspace("w1", tmp_path, settings={"budget": [2, 2.0]})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    for a in ("a1", "a2", "a3"):
        await engine.add_node({"id": a, "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": f"e{a}", "from": "c1", "to": a})
    ids = [(await engine.call("c1", "agents.prompt", a, {"text": "go"})).prompt
           for a in ("a1", "a2", "a3")]
    assert [engine.prompt(i).state for i in ids] == ["delivered", "delivered", "queued"]
    clock.t += 1.0  # the bucket has room again after 1 s
    for _ in polls():
        if engine.prompt(ids[2]).state == "delivered":
            break
        await asyncio.sleep(0.02)
    assert engine.prompt(ids[2]).state == "delivered"


async def test_remembered_decisions_never_outlive_a_consent_change(world: Engine) -> None:
    """The decision cache is keyed by every change checks 1-9 read: each one is seen at once."""
    async def run() -> str:
        d = await world.call("c1", "terminals.run", "t1", {"command": "ls"})
        return d.reason or d.code or d.outcome

    async def prompt() -> str:
        d = await world.call("c1", "cards.note.read", "n1")
        return d.reason or d.code or d.outcome

    assert await run() == "ok" and await run() == "ok"  # the second one is remembered
    await world.revoke("acme.prompter", "terminals.write")
    assert await run() == "not-granted"
    await world.grant("acme.prompter", "terminals.write")
    assert await run() == "ok"
    await world.remove_arrow("e3")
    assert await run() == "not-connected"
    await world.add_arrow({"id": "e3b", "from": "t1", "to": "c1"})
    assert await run() == "ok"
    await world.remove_node("t1")
    assert await run() == "not-connected"
    assert await prompt() == "ok"
    await world.update("acme.prompter", digests={"index.js": "v2"})
    assert await prompt() == "PACKAGE_PENDING"
    await world.set_node("c1", {"package": "acme.other"})
    assert await prompt() == "PACKAGE_NOT_INSTALLED"


async def test_data_changes_keep_remembered_decisions_but_are_seen(world: Engine) -> None:
    """A status or mode change does not empty the decision cache, yet the call sees it.

    Checks 1-9 read only which nodes and arrows exist and their types,
    workspaces and packages; what happens next reads the rest of the node
    (dangerous mode holds the prompt, a note is read as it is now).
    """
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "one"})).outcome == "queued"
    assert (await world.call("c1", "cards.note.read", "n1")).value == ""
    key = world.state.consent_key()
    await world.set_node("a1", {"dangerous": True})
    await world.set_node("n1", {"text": "buy milk"})
    assert world.state.consent_key() == key  # still remembered
    d = await world.call("c1", "agents.prompt", "a1", {"text": "two"})
    assert d.outcome == "held", d.message
    assert (await world.call("c1", "cards.note.read", "n1")).value == "buy milk"
    await world.set_node("a1", {"dangerous": False})
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "three"})).outcome == "queued"
    # A new package is something checks 1-9 read: the key moves on.
    await world.set_node("c1", {"package": "acme.other"})
    assert world.state.consent_key() != key
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "x"})).code == \
        "PACKAGE_NOT_INSTALLED"
