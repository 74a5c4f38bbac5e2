"""SPEC §5: when several checks fail at once, the first in the spec's order answers.

Each test builds one call that fails two or three checks together and
expects the code and reason of the earliest; the decision is the same
whichever path (cached, general, full) the engine takes, so each call is
also made a second time (the remembered answer) and compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Decision, Engine

from ..conftest import manifest, offer_install


async def _twice(engine: Engine, card: str, call: str, target: str | None = None,
                 args: dict[str, Any] | None = None, **kw: Any) -> Decision:
    """The call made twice: the first answer and the remembered one agree."""
    first = await engine.call(card, call, target, args, **kw)
    again = await engine.call(card, call, target, args, **kw)
    assert (first.code, first.reason, first.permission) == \
        (again.code, again.reason, again.permission)
    return first


async def _engine(make_engine: Any, tmp_path: Path, **settings: Any) -> Engine:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws", settings=settings or None)
    return engine


async def test_a_pending_package_beats_an_unknown_call_and_bad_arguments(
        world: Engine) -> None:
    """Check 2 (PACKAGE_PENDING) before check 3 (UNKNOWN_CALL, INVALID_ARGUMENT)."""
    await world.update("acme.prompter", digests={"index.js": "0" * 64})
    assert (await _twice(world, "c1", "made.up", "a1")).code == "PACKAGE_PENDING"
    assert (await _twice(world, "c1", "agents.prompt", "a1", {"txt": 1})).code \
        == "PACKAGE_PENDING"
    assert (await _twice(world, "c1", "agents.prompt", "a1", {"text": "\ud800"})).code \
        == "PACKAGE_PENDING"


async def test_an_uninstalled_package_beats_an_unknown_call(make_engine: Any,
                                                             tmp_path: Path) -> None:
    """Check 2 (PACKAGE_NOT_INSTALLED) before check 3, and before any permission check."""
    engine = await _engine(make_engine, tmp_path)
    await offer_install(engine, manifest("acme.off", {"agents.prompt": {}}), grant=None)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.off"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    for call, args in (("made.up", None), ("agents.prompt", {"text": 5}),
                       ("agents.prompt", {"text": "hi"})):
        d = await _twice(engine, "c1", call, "a1", args)
        assert (d.code, d.reason) == ("PACKAGE_NOT_INSTALLED", None), call


async def test_a_card_unknown_beats_everything(world: Engine) -> None:
    """Check 1: a node that is not a card, however wrong the rest, is CARD_UNKNOWN."""
    for card in ("a1", "n1", "ghost"):
        d = await _twice(world, card, "made.up", "nowhere", {"x": "\ud800"})
        assert d.code == "CARD_UNKNOWN", card


async def test_bad_arguments_beat_undeclared_unconnected_and_wrong_target(
        world: Engine) -> None:
    """Check 3 (INVALID_ARGUMENT) before checks 4, 6 and 7."""
    # readScreen is not declared by acme.prompter; a2 has no arrow; "x" takes no argument.
    d = await _twice(world, "c1", "agents.readScreen", "a2", {"x": "y"})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "x")
    # A prompt to a terminal (wrong-target) with a text over max_payload.
    d = await _twice(world, "c1", "agents.prompt", "t1", {"text": "x" * (256 * 1024 + 1)})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "text")
    # A target given to a call that takes none, with the permission undeclared.
    d = await _twice(world, "c1", "usage.get", "a1")
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "target")
    # A call that needs a target, without one, its permission undeclared.
    d = await _twice(world, "c1", "agents.readScreen")
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "target")


async def test_undeclared_beats_unconnected_and_wrong_target(world: Engine) -> None:
    """Check 4 (not-declared) before checks 6 and 7: t1 is connected, a2 is not."""
    for target in ("a2", "n1", "nowhere"):
        d = await _twice(world, "c1", "agents.readScreen", target)
        assert (d.code, d.reason, d.permission) == \
            ("PERMISSION_DENIED", "not-declared", "agents.output"), target


async def test_ungranted_beats_unconnected_wrong_target_and_rates(world: Engine,
                                                                  clock: Any) -> None:
    """Check 5 (not-granted) before checks 6, 7 and 10."""
    await world.revoke("acme.prompter", "agents.prompt")
    for target in ("a2", "t1", "nowhere"):
        d = await _twice(world, "c1", "agents.prompt", target, {"text": "hi"})
        assert (d.code, d.reason, d.permission) == \
            ("PERMISSION_DENIED", "not-granted", "agents.prompt"), target


async def test_unconnected_beats_wrong_target(world: Engine) -> None:
    """Check 6 before check 7: an unconnected node of the wrong kind is not-connected."""
    await world.add_node({"id": "t2", "type": "terminal"}, workspace="w1")
    d = await _twice(world, "c1", "agents.prompt", "t2", {"text": "hi"})
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-connected")
    d = await _twice(world, "c1", "cards.note.append", "a2", {"text": "hi"})
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-connected")


async def test_wrong_target_beats_a_full_rate_window(world: Engine) -> None:
    """Check 7 before check 10: with the prompt window full, a terminal is still wrong-target."""
    for i in range(6):
        assert (await world.call("c1", "agents.prompt", "a1", {"text": str(i)})).allowed
    assert (await world.call("c1", "agents.prompt", "a1", {"text": "7"})).code \
        == "RATE_LIMITED"
    d = await _twice(world, "c1", "agents.prompt", "t1", {"text": "hi"})
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "wrong-target")
    d = await _twice(world, "c1", "agents.prompt", "a2", {"text": "hi"})
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-connected")


async def test_scope_beats_nothing_earlier(make_engine: Any, tmp_path: Path) -> None:
    """net.fetch: bad arguments (3) before not-granted (5) before scope (8)."""
    engine = await _engine(make_engine, tmp_path)
    await offer_install(engine, manifest("acme.net", {
        "network": {"hosts": ["api.github.com"], "optional": True}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.net"}, workspace="w1")
    # Plain http to an undeclared host, with a framing header: INVALID_ARGUMENT.
    d = await _twice(engine, "c1", "net.fetch", None,
                     {"url": "http://evil.example/", "headers": {"Host": "x"}})
    assert (d.code, d.reason) == ("INVALID_ARGUMENT", "headers")
    # The same without the header, network declared but not granted: not-granted.
    d = await _twice(engine, "c1", "net.fetch", None, {"url": "http://evil.example/"})
    assert (d.code, d.reason, d.permission) == ("PERMISSION_DENIED", "not-granted", "network")
    await engine.grant("acme.net", "network")
    d = await _twice(engine, "c1", "net.fetch", None, {"url": "http://evil.example/"})
    assert d.code == "SCOPE_REFUSED"


async def test_a_loop_beats_a_full_rate_window_and_a_full_queue(
        make_engine: Any, tmp_path: Path, clock: Any) -> None:
    """Check 9 (LOOP_REFUSED) before checks 10 (RATE_LIMITED) and 11 (QUEUE_FULL)."""
    engine = await _engine(make_engine, tmp_path)
    await offer_install(engine, manifest("acme.tools", {"agents.prompt": {}}, tools=["ping"]))
    for node in ({"id": "c1", "type": "card", "package": "acme.tools"},
                 {"id": "a1", "type": "agent", "status": "working"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    # Fill a1's queue (20 undelivered), the last 6 inside one minute.
    for i in range(14):
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": str(i)})).allowed
        clock.t += 11
    clock.t += 60
    for i in range(6):
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": str(i)})).allowed
    tc = await engine.tool("a1", "c1", "ping")
    assert tc.outcome == "ok"
    d = await _twice(engine, "c1", "agents.prompt", "a1", {"text": "back"},
                     context=tc.value["id"])
    assert (d.code, d.reason) == ("LOOP_REFUSED", "cycle")


async def test_a_full_rate_window_beats_a_full_queue(make_engine: Any, tmp_path: Path,
                                                     clock: Any) -> None:
    """Check 10 (RATE_LIMITED) before check 11 (QUEUE_FULL), and neither counts."""
    engine = await _engine(make_engine, tmp_path)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "a1", "type": "agent", "status": "working"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    for i in range(14):
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": str(i)})).allowed
        clock.t += 11
    clock.t += 60
    for i in range(6):
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": str(i)})).allowed
    d = await _twice(engine, "c1", "agents.prompt", "a1", {"text": "21st"})
    assert (d.code, d.outcome) == ("RATE_LIMITED", "rate-limited")
    clock.t += 60
    d = await _twice(engine, "c1", "agents.prompt", "a1", {"text": "21st"})
    assert (d.code, d.outcome) == ("QUEUE_FULL", "denied")


async def test_a_full_queue_beats_the_dangerous_hold(make_engine: Any, tmp_path: Path,
                                                     clock: Any) -> None:
    """Check 11 (QUEUE_FULL) before check 12: a prompt to a full, dangerous agent is not held."""
    engine = await _engine(make_engine, tmp_path)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.p"},
                 {"id": "a1", "type": "agent", "status": "working"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    for i in range(20):
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": str(i)})).allowed
        clock.t += 11
    await engine.set_node("a1", {"dangerous": True})
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "held?"})
    assert (d.code, d.outcome) == ("QUEUE_FULL", "denied")
    assert engine.prompts(state="held") == []


async def test_fetch_permissions_pass_checks_4_and_5_together(make_engine: Any,
                                                              tmp_path: Path) -> None:
    """SPEC §5: net.fetch passes checks 4–5 when network or network.local is declared and
    granted; a host no declared *and granted* fetch permission covers is host-not-declared,
    even when an ungranted one declares it; neither granted is not-granted."""
    engine = await _engine(make_engine, tmp_path)
    for name, perms in (
            ("acme.a", {"network": {"hosts": ["api.github.com"], "optional": True},
                        "network.local": {}}),
            ("acme.b", {"network": {"hosts": ["api.github.com"], "optional": True},
                        "network.local": {"optional": True}}),
            ("acme.c", {"network.local": {"optional": True}})):
        await offer_install(engine, manifest(name, perms))
        await engine.add_node({"id": name[-1], "type": "card", "package": name},
                              workspace="w1")
    for card, url, want in (
            ("a", "https://api.github.com/", ("SCOPE_REFUSED", "host-not-declared")),
            ("b", "https://api.github.com/", ("PERMISSION_DENIED", "not-granted")),
            ("b", "http://localhost/", ("PERMISSION_DENIED", "not-granted")),
            ("c", "https://api.github.com/", ("PERMISSION_DENIED", "not-granted")),
            ("a", "https://api.github.com.evil.com/", ("SCOPE_REFUSED", "host-not-declared"))):
        d = await _twice(engine, card, "net.fetch", None, {"url": url})
        assert (d.code, d.reason) == want, (card, url)
