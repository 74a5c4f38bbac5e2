"""Writes bounded in round 27 (SPEC §8 "Bounds") made in a tool call's context keep its
chain on their log rows (SPEC §8, §9), allowed or refused, on SQLite and PostgreSQL:
data a card sends another card on a port arrow (the ``port-data`` window) and a note
appended past ``content_max_bytes`` or past the ``card-write`` window.

Found in round 27 (review of the merged branches): data sent card to card naming a tool
call as its context was logged with no chain, delivered or refused ``RATE_LIMITED``,
while every other call made in that context kept the chain on its row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install


async def _world(make_engine: Any, tmp_path: Path) -> tuple[Engine, str]:
    """Card c1 (tool ``relay``, may use notes) called by agent a1, wired to note n1 and,
    by a port arrow ``p1`` from its ``out``, to card c2's ``in``; a1's tool call open."""
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws",
                                  settings={"content_max_bytes": 2000, "card_write_limit": 3})
    await offer_install(engine, manifest("acme.relay", {"cards.connected": {}},
                                         tools=["relay"],
                                         ports={"inputs": [], "outputs": ["out"]}))
    await offer_install(engine, manifest("acme.dst", {}, ports={"inputs": ["in"],
                                                                "outputs": []}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.relay"}, workspace="w1")
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.dst"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_node({"id": "n1", "type": "note"}, workspace="w1")
    await engine.add_arrow({"id": "e-n1", "from": "c1", "to": "n1"})
    await engine.add_arrow({"id": "e-a1", "from": "a1", "to": "c1"})
    await engine.add_arrow({"id": "p1", "from": "c1", "from_port": "out", "to": "c2",
                            "to_port": "in"})
    k = (await engine.tool("a1", "c1", "relay")).value["id"]
    return engine, k


async def test_card_to_card_port_data_in_a_tool_calls_context_is_logged_with_its_chain(
        make_engine: Any, tmp_path: Path) -> None:
    """Delivered and refused RATE_LIMITED (the 61st in a minute) alike, the row keeps
    the chain a1 → c1."""
    engine, k = await _world(make_engine, tmp_path)
    for i in range(60):
        assert (await engine.emit("c1", "out", f"chunk {i}", context=k))["p1"].outcome == "ok"
        assert engine.log_rows(arrow="p1")[-1]["chain"] == ["a1", "c1"], i
    refused = (await engine.emit("c1", "out", "one more", context=k))["p1"]
    assert refused.code == "RATE_LIMITED"
    row = engine.log_rows(arrow="p1")[-1]
    assert (row["code"], row["chain"]) == ("RATE_LIMITED", ["a1", "c1"])
    assert engine.verify_log().ok


async def test_note_writes_refused_in_a_tool_calls_context_are_logged_with_its_chain(
        make_engine: Any, tmp_path: Path) -> None:
    """A note append past content_max_bytes (CARD_LIMIT, refused in the carrying out)
    and one past the card-write window (RATE_LIMITED, at check 10) keep the chain."""
    engine, k = await _world(make_engine, tmp_path)
    big = await engine.call("c1", "cards.note.append", "n1", {"text": "x" * 1500}, context=k)
    assert big.outcome == "ok"
    over = await engine.call("c1", "cards.note.append", "n1", {"text": "y" * 600}, context=k)
    assert over.code == "CARD_LIMIT", over.message
    row = engine.log_rows(call="cards.note.append")[-1]
    assert (row["code"], row["chain"]) == ("CARD_LIMIT", ["a1", "c1"])
    for text in ("z", "v"):  # the CARD_LIMIT refusal counted nothing: 3 in the window
        assert (await engine.call("c1", "cards.note.append", "n1", {"text": text},
                                  context=k)).outcome == "ok"
    limited = await engine.call("c1", "cards.note.append", "n1", {"text": "w"}, context=k)
    assert limited.code == "RATE_LIMITED", limited.message
    row = engine.log_rows(call="cards.note.append")[-1]
    assert (row["code"], row["chain"]) == ("RATE_LIMITED", ["a1", "c1"])
    assert engine.verify_log().ok


async def test_port_data_refused_as_not_text_in_a_tool_calls_context_keeps_its_chain(
        make_engine: Any, tmp_path: Path) -> None:
    """Data that is not text sent on a port arrow into a terminal's input, naming the
    tool call: refused INVALID_ARGUMENT, its row keeps the chain a1 → c1."""
    engine, k = await _world(make_engine, tmp_path)
    await engine.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    await engine.add_arrow({"id": "p-t1", "from": "c1", "from_port": "out", "to": "t1",
                            "to_port": "command"})
    refused = (await engine.emit("c1", "out", {"not": "text"}, context=k))["p-t1"]
    assert refused.code == "INVALID_ARGUMENT"
    row = engine.log_rows(arrow="p-t1")[-1]
    assert (row["code"], row["chain"]) == ("INVALID_ARGUMENT", ["a1", "c1"])


async def test_port_data_into_a_note_refused_in_a_tool_calls_context_keeps_its_chain(
        make_engine: Any, tmp_path: Path) -> None:
    """Data on a port arrow into a note's ``append`` input, naming the tool call: past
    content_max_bytes it is refused CARD_LIMIT in the carrying out, and past the
    card-write window RATE_LIMITED; each row keeps the chain a1 → c1."""
    engine, k = await _world(make_engine, tmp_path)
    await engine.add_arrow({"id": "p-n1", "from": "c1", "from_port": "out", "to": "n1",
                            "to_port": "append"})
    sent = [(await engine.emit("c1", "out", text, context=k))["p-n1"]
            for text in ("x" * 1500, "y" * 600, "z", "w", "v")]
    assert [d.code for d in sent] == [None, "CARD_LIMIT", None, None, "RATE_LIMITED"], sent
    rows = engine.log_rows(arrow="p-n1")
    assert [(r["code"], r["chain"]) for r in rows] == [
        (code, ["a1", "c1"]) for code in (None, "CARD_LIMIT", None, None, "RATE_LIMITED")]
