"""A note, sticky, todo or taskboard sends its content on its output port (SPEC §1's
built-in ports: note and sticky ``text``, todo ``checklist``, taskboard ``tasks``) each
time it changes — by a card's write, by data on its input port, or by a person's edit —
to every card a port arrow leads it to, as an agent's ``reply`` and a terminal's ``exit``
go: the receiving card needs ``cards.connected`` (the port's permission), each delivery
or refusal is a row on the port arrow after the row of the change that caused it, and
what is sent stays within the workspace's ``max_payload`` (text cut and marked, as an
agent's reply is; a list too large to send is refused, its row bounded).

(Found in round 26 by the audit of SPEC §1: only agents' and terminals' output ports
ever sent anything; a port arrow from a note to a card carried nothing.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from engine.core.events import Event

from ..conftest import manifest, offer_install


async def _canvas(engine: Engine, tmp_path: Path) -> None:
    await engine.create_workspace("w1", str(tmp_path), settings={"max_payload": 1024})
    await offer_install(engine, manifest("acme.w", {"cards.connected": {}},
                                         ports={"inputs": [], "outputs": ["out"]}))
    await offer_install(engine, manifest("acme.r", {"cards.connected": {}},
                                         ports={"inputs": ["in"], "outputs": []}))
    await offer_install(engine, manifest("acme.blind", {},
                                         ports={"inputs": ["in"], "outputs": []}))
    for card, pkg in (("w", "acme.w"), ("r", "acme.r"), ("b", "acme.blind")):
        await engine.add_node({"id": card, "type": "card", "package": pkg}, workspace="w1")
    for kind, port in (("note", "text"), ("sticky", "text"), ("todo", "checklist"),
                       ("taskboard", "tasks")):
        await engine.add_node({"id": kind, "type": kind}, workspace="w1")
        await engine.add_arrow({"id": f"w-{kind}", "from": "w", "to": kind})
        await engine.add_arrow({"id": f"{kind}-r", "from": kind, "from_port": port,
                                "to": "r", "to_port": "in"})


def _sent(events: list[Event], source: str) -> list[Any]:
    return [e.data["data"] for e in events
            if e.type == "port.data" and e.card == "r" and e.data.get("source") == source]


async def test_each_built_in_card_sends_its_content_when_it_changes(
        make_engine: Any, tmp_path: Path) -> None:
    events: list[Event] = []
    engine = make_engine(sink=events.append)
    await _canvas(engine, tmp_path)
    for kind, verb in (("note", "append"), ("sticky", "write"), ("todo", "add"),
                       ("taskboard", "add")):
        d = await engine.call("w", f"cards.{kind}.{verb}", kind, {"text": "ship it"})
        assert d.outcome == "ok", d.message
    await engine.call("w", "cards.note.append", "note", {"text": "then tag it"})
    assert _sent(events, "note") == ["ship it", "ship it\nthen tag it"]
    assert _sent(events, "sticky") == ["ship it"]
    assert _sent(events, "todo") == [[{"id": "todo-1", "text": "ship it", "done": False}]]
    assert _sent(events, "taskboard") == [[{"id": "taskboard-1", "text": "ship it",
                                            "column": "todo"}]]
    rows = engine.log_rows(arrow="note-r")
    assert [(r["call"], r["outcome"], r["card"], r["target"], r["payload"]) for r in rows] == [
        ("port:text", "ok", "r", "note", "ship it"),
        ("port:text", "ok", "r", "note", "ship it\nthen tag it")]
    # Each delivery's row comes after the row of the write that caused it.
    seqs = {(r["call"], r["payload"]): r["seq"] for r in engine.log_rows()
            if r["target"] == "note"}
    assert seqs[("cards.note.append", "then tag it")] < seqs[("port:text", "ship it\nthen tag it")]
    # A person's edit of the content sends it too; an edit that leaves it as it was does not.
    await engine.set_node("sticky", {"text": "by hand"})
    await engine.set_node("sticky", {"text": "by hand"})
    assert _sent(events, "sticky") == ["ship it", "by hand"]


async def test_a_card_without_the_ports_permission_gets_a_refusal_row(
        make_engine: Any, tmp_path: Path) -> None:
    events: list[Event] = []
    engine = make_engine(sink=events.append)
    await _canvas(engine, tmp_path)
    await engine.add_arrow({"id": "note-b", "from": "note", "from_port": "text", "to": "b",
                            "to_port": "in"})
    await engine.call("w", "cards.note.append", "note", {"text": "secret plan"})
    assert not [e for e in events if e.type == "port.data" and e.card == "b"]
    [row] = engine.log_rows(arrow="note-b")
    assert (row["outcome"], row["code"], row["reason"]) == ("denied", "PERMISSION_DENIED",
                                                            "not-declared")


async def test_what_is_sent_stays_within_max_payload(make_engine: Any, tmp_path: Path) -> None:
    events: list[Event] = []
    engine = make_engine(sink=events.append)
    await _canvas(engine, tmp_path)
    for i in range(3):
        assert (await engine.call("w", "cards.note.append", "note",
                                  {"text": f"{i}" * 600})).outcome == "ok"
        assert (await engine.call("w", "cards.todo.add", "todo",
                                  {"text": f"{i}" * 600})).outcome == "ok"
    notes = _sent(events, "note")
    assert len(notes) == 3 and all(len(n.encode()) <= 1024 for n in notes)
    assert notes[-1].endswith(f"[cut: {3 * 600 + 2} bytes in all]")
    # One item fits; two are more than max_payload as JSON: refused, not sent.
    assert len(_sent(events, "todo")) == 1
    rows = engine.log_rows(arrow="todo-r")
    assert [(r["outcome"], r["code"], r["reason"]) for r in rows] == [
        ("ok", None, None), ("denied", "INVALID_ARGUMENT", "data"),
        ("denied", "INVALID_ARGUMENT", "data")]
    assert all(len(str(r["payload"]).encode()) <= 4096 for r in rows)


async def test_a_note_with_no_port_arrow_sends_nothing_and_costs_no_row(
        make_engine: Any, tmp_path: Path) -> None:
    engine = make_engine()
    await _canvas(engine, tmp_path)
    await engine.remove_arrow("note-r")
    before = len(engine.log_rows())
    await engine.call("w", "cards.note.append", "note", {"text": "x"})
    assert len(engine.log_rows()) == before + 1  # the append's own row alone


async def test_data_on_the_notes_input_port_goes_out_on_its_output_port(
        make_engine: Any, tmp_path: Path) -> None:
    events: list[Event] = []
    engine = make_engine(sink=events.append)
    await _canvas(engine, tmp_path)
    await engine.add_arrow({"id": "w-in", "from": "w", "from_port": "out", "to": "note",
                            "to_port": "append"})
    out = await engine.emit("w", "out", "by port")
    assert out["w-in"].outcome == "ok", out["w-in"].message
    assert _sent(events, "note") == ["by port"]
    rows = [(r["call"], r["arrow"]) for r in engine.log_rows() if r["target"] == "note"]
    assert rows == [("cards.note.append", "w-in"), ("port:text", "note-r")]
