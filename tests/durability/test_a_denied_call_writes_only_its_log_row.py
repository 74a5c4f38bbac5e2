"""SPEC §5: "A denied call changes nothing: nothing but its log row (§8) is written for
it" — for a refusal at each check of the decision order, every table of the store but the
log's own is as it was, and the log grew by exactly that call's row; refused calls never
count toward a rate key (so the next call of the key is decided as before). On both
stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

#: The log's own tables: its rows and their indexes by card and by arrow.
LOG_TABLES = {"log", "log_cards", "log_arrows"}


def _tables(target: Target) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of the store but the log's, each as its rows in a fixed order."""
    if target.postgres:
        names = [r[0] for r in target.query(
            "select table_name from information_schema.tables "
            "where table_schema = current_schema() and table_type = 'BASE TABLE'")]
    else:
        names = [r[0] for r in target.query(
            "select name from sqlite_master where type = 'table'")]
    return {name: sorted(target.query(f'select * from "{name}"'), key=repr)
            for name in names if name not in LOG_TABLES}


async def _canvas(engine: Engine, folder: Path, clock: VirtualClock) -> str:
    """Cards c1 (acme.p) and cp (acme.pend, pending), co (acme.off, offered only); agents a1
    (working, its queue full), a2 (not wired), a3 (a tool's caller); terminal t1; an open
    tool call of a3 to c1. Returns the tool call's id."""
    folder.mkdir()
    await engine.create_workspace("w1", folder, settings={"card_cap": 9})
    await offer_install(engine, manifest("acme.p", {
        "agents.prompt": {}, "clipboard.write": {}, "canvas.spawn": {},
        "network": {"hosts": ["api.example.com"]}, "usage.read": {"optional": True}},
        tools=["relay"]))
    await offer_install(engine, manifest("acme.pend", {"usage.read": {}}))
    await offer_install(engine, manifest("acme.off", {"usage.read": {}}), grant=None)
    for node, package in (("c1", "acme.p"), ("cp", "acme.pend"), ("co", "acme.off")):
        await engine.add_node({"id": node, "type": "card", "package": package},
                              workspace="w1")
    await engine.update("acme.pend", manifest={**manifest("acme.pend", {"usage.read": {}}),
                                               "version": "1.1.0"})
    await engine.add_node({"id": "a1", "type": "agent", "status": "working"}, workspace="w1")
    await engine.add_node({"id": "a2", "type": "agent"}, workspace="w1")
    await engine.add_node({"id": "a3", "type": "agent", "status": "working"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    for arrow, src, dst in (("e1", "c1", "a1"), ("et", "c1", "t1"), ("e3", "a3", "c1")):
        await engine.add_arrow({"id": arrow, "from": src, "to": dst})
    # a1's queue full: 20 undelivered prompts, 6 a minute
    for i in range(20):
        if i and i % 6 == 0:
            clock.t += 60.0
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": f"q{i}"})).allowed
    clock.t += 60.0
    tool = await engine.tool("a3", "c1", "relay", {})
    assert await engine.call("c1", "clipboard.copyText", None, {"text": "first"})
    assert tool.outcome == "ok", tool
    return str(tool.value["id"])


async def test_a_refusal_at_every_check_writes_nothing_but_its_row(
        make_engine: Any, target: Target, clock: VirtualClock, tmp_path: Path) -> None:
    """CARD_UNKNOWN, PACKAGE_NOT_INSTALLED, PACKAGE_PENDING, UNKNOWN_CALL,
    INVALID_ARGUMENT, each PERMISSION_DENIED reason, SCOPE_REFUSED, LOOP_REFUSED,
    RATE_LIMITED, CARD_LIMIT and QUEUE_FULL: the store's tables unchanged, one row each."""
    # GIVEN a canvas where each refusal can be made
    engine = make_engine()
    tool = await _canvas(engine, tmp_path / "ws", clock)
    refusals = [
        ("ghost", "usage.get", None, None, None, "CARD_UNKNOWN"),
        ("co", "usage.get", None, None, None, "PACKAGE_NOT_INSTALLED"),
        ("cp", "usage.get", None, None, None, "PACKAGE_PENDING"),
        ("c1", "made.up", None, None, None, "UNKNOWN_CALL"),
        ("c1", "agents.prompt", "a1", {"text": "\ud800"}, None, "INVALID_ARGUMENT"),
        ("c1", "fs.readText", None, {"path": "a"}, None, "PERMISSION_DENIED"),
        ("c1", "usage.get", None, None, None, "PERMISSION_DENIED"),
        ("c1", "agents.prompt", "a2", {"text": "x"}, None, "PERMISSION_DENIED"),
        ("c1", "agents.prompt", "t1", {"text": "x"}, None, "PERMISSION_DENIED"),
        ("c1", "net.fetch", None, {"url": "http://api.example.com/"}, None, "SCOPE_REFUSED"),
        ("c1", "agents.prompt", "a3", {"text": "x"}, tool, "LOOP_REFUSED"),
        ("c1", "clipboard.copyText", None, {"text": "second"}, None, "RATE_LIMITED"),
        ("c1", "agents.prompt", "a1", {"text": "one more"}, None, "QUEUE_FULL"),
    ]
    await engine.add_arrow({"id": "ea3", "from": "c1", "to": "a3"})
    for note in ("n0", "n1"):  # the workspace's card cap: 9 nodes, of every kind
        await engine.add_node({"id": note, "type": "note"}, workspace="w1")
    # WHEN each refusal is made, THEN only its own row is written
    for card, call, target_id, args, context, code in refusals:
        before, end = _tables(target), engine.log_end()
        d = await engine.call(card, call, target_id, args, context=context)
        assert d.code == code and not d.allowed, (code, d)
        assert _tables(target) == before, code
        rows = engine.log_rows()
        assert engine.log_end() == end + 1 and rows[-1]["code"] == code
    # ...and so does a spawn past the workspace's card cap (every node counts)
    assert len(engine.state.canvas.nodes("w1")) == 9
    before = _tables(target)
    d = await engine.call("c1", "canvas.spawn", None, {"kind": "note"})
    assert d.code == "CARD_LIMIT" and _tables(target) == before
    assert make_engine().verify_log().ok
