"""While a tool call is open, the calls its card makes naming it as their context carry
its chain (SPEC §9), and each log row keeps the causal chain of its call (SPEC §8): a
terminal command, a terminal write, a note appended, a screen read, data on a port
arrow into a terminal — allowed or refused, on SQLite and PostgreSQL.

Found in round 27: only prompts were logged with the chain; every other allowed call
made in a tool call's context was logged with none (its refusal kept it), so the arrow
log of a terminal did not say which agent's tool call ran a command on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install


async def _world(make_engine: Any, tmp_path: Path) -> Engine:
    """Card c1 (tool ``relay``; it may write to terminals, use notes, read agents' output)
    wired to agents a1 and a2, terminal t1 and note n1; a port arrow from its ``out`` to
    t1's ``command``."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest(
        "acme.relay", {"terminals.write": {}, "cards.connected": {}, "agents.output": {}},
        tools=["relay"], ports={"inputs": [], "outputs": ["out"]}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    for node in ({"id": "a1", "type": "agent"}, {"id": "a2", "type": "agent"},
                 {"id": "t1", "type": "terminal"}, {"id": "n1", "type": "note"}):
        await engine.add_node(node, workspace="w1")
        await engine.add_arrow({"id": f"e-{node['id']}", "from": "c1", "to": node["id"]})
    await engine.add_arrow({"id": "p-t1", "from": "c1", "from_port": "out", "to": "t1",
                            "to_port": "command"})
    return engine


CALLS = [("terminals.run", "t1", {"command": "make test"}),
         ("terminals.write", "t1", {"data": "y\n"}),
         ("cards.note.append", "n1", {"text": "seen"}),
         ("agents.readScreen", "a2", None)]


async def test_each_call_made_in_a_tool_calls_context_is_logged_with_its_chain(
        make_engine: Any, tmp_path: Path) -> None:
    """a1's tool call open, each allowed call naming it is logged with the chain a1 → c1,
    as its refusal is; the same calls naming no context are logged with none."""
    engine = await _world(make_engine, tmp_path)
    k = (await engine.tool("a1", "c1", "relay")).value["id"]
    for call, target, args in CALLS:
        d = await engine.call("c1", call, target, args, context=k)
        assert d.outcome == "ok", (call, d.message)
        row = engine.log_rows(call=call)[-1]
        assert (row["outcome"], row["chain"]) == ("ok", ["a1", "c1"]), call
    out = await engine.emit("c1", "out", "ls", context=k)
    assert out["p-t1"].outcome == "ok"
    assert engine.log_rows(arrow="p-t1")[-1]["chain"] == ["a1", "c1"]
    refused = await engine.call("c1", "terminals.run", "t1", {"command": 3}, context=k)
    assert refused.code == "INVALID_ARGUMENT"
    assert engine.log_rows(outcome="denied")[-1]["chain"] == ["a1", "c1"]
    # Outside any tool call's context: no chain.
    for call, target, args in CALLS:
        assert (await engine.call("c1", call, target, args)).outcome == "ok"
        assert engine.log_rows(call=call)[-1]["chain"] is None, call
    assert engine.verify_log().ok


async def test_file_calls_in_a_tool_calls_context_are_logged_with_its_chain(
        make_engine: Any, tmp_path: Path) -> None:
    """A file call, carried out in a thread and logged after, keeps the chain on its row,
    allowed or refused as it is carried out (a secret path, a missing file)."""
    from engine import World
    from engine.effects.files import ConfinedFiles

    engine: Engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.files", {"fs.write": {}}, tools=["relay"]))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.files"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    k = (await engine.tool("a1", "c1", "relay")).value["id"]
    for call, args, code in (("fs.writeText", {"path": "notes.md", "text": "hi"}, None),
                             ("fs.readText", {"path": "notes.md"}, None),
                             ("fs.readText", {"path": "missing.md"}, "NOT_FOUND"),
                             ("fs.readText", {"path": ".env"}, "SCOPE_REFUSED")):
        d = await engine.call("c1", call, None, args, context=k)
        assert d.code == code, (call, args, d.message)
        row = engine.log_rows(call=call)[-1]
        assert (row["code"], row["chain"]) == (code, ["a1", "c1"]), (call, args)
