"""The canvas model: node checks, arrow rules, persistence."""

from __future__ import annotations

import copy

import pytest

from canvas import Canvas, InvalidArrow, InvalidNode, Node, Workspace
from engine.store import CanvasStore, open_database, write_transaction


def _canvas() -> Canvas:
    ports = {"c1": (frozenset({"in"}), frozenset({"out"}))}
    canvas = Canvas(lambda node: ports.get(node.id))
    for raw in ({"id": "c1", "type": "card", "package": "p"},
                {"id": "a1", "type": "agent"}, {"id": "t1", "type": "terminal"}):
        canvas.add_node(Node.build(raw, "w1"))
    canvas.add_node(Node.build({"id": "x1", "type": "note"}, "w2"))
    return canvas


@pytest.mark.parametrize("arrow, reason", [
    ({"id": "e", "from": "c1", "to": "c1"}, "self-arrow"),
    ({"id": "e", "from": "c1", "to": "ghost"}, "missing-node"),
    ({"id": "e", "from": "c1", "to": "x1"}, "cross-workspace"),
    ({"id": "e", "from": "c1", "to": "a1", "from_port": "nope", "to_port": "prompt"}, "unknown-port"),
    ({"id": "e", "from": "c1", "to": "a1", "from_port": "out", "to_port": "reply"}, "wrong-direction"),
    ({"id": "e", "from": "a1", "to": "c1", "from_port": "prompt", "to_port": "in"}, "wrong-direction"),
    ({"id": "e", "from": "c1", "to": "a1", "from_port": "out"}, "unknown-port"),
    ({"id": "", "from": "c1", "to": "a1"}, "bad-id"),
])
def test_invalid_arrows_are_refused_and_change_nothing(arrow: dict, reason: str) -> None:
    """Each kind of invalid arrow raises INVALID_ARROW with its reason; the graph is unchanged."""
    canvas = _canvas()
    before = canvas.graph.number_of_edges()
    with pytest.raises(InvalidArrow) as err:
        canvas.add_arrow(arrow)
    assert err.value.code == "INVALID_ARROW" and err.value.reason == reason
    assert canvas.graph.number_of_edges() == before


def test_plain_arrow_connects_both_ways_and_port_arrows_one_way() -> None:
    """A plain arrow connects in either direction; a port arrow is not a plain connection."""
    canvas = _canvas()
    canvas.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    canvas.add_arrow({"id": "e2", "from": "c1", "to": "t1", "from_port": "out", "to_port": "command"})
    assert canvas.arrow_between("c1", "a1").id == "e1"
    assert canvas.arrow_between("c1", "t1") is None
    assert [a.id for a in canvas.port_arrows_from("c1", "out")] == ["e2"]


def test_port_arrows_from_follows_adds_and_removals() -> None:
    """The port index agrees with the graph after arrows and nodes come and go."""
    canvas = _canvas()
    canvas.add_arrow({"id": "e3", "from": "c1", "to": "t1", "from_port": "out",
                      "to_port": "command"})
    canvas.add_arrow({"id": "e2", "from": "c1", "to": "a1", "from_port": "out",
                      "to_port": "prompt"})
    canvas.add_arrow({"id": "e4", "from": "t1", "to": "c1", "from_port": "exit", "to_port": "in"})
    assert [a.id for a in canvas.port_arrows_from("c1", "out")] == ["e2", "e3"]
    canvas.remove_arrow("e2")
    assert [a.id for a in canvas.port_arrows_from("c1", "out")] == ["e3"]
    canvas.remove_node("t1")
    assert canvas.port_arrows_from("c1", "out") == []
    assert canvas.port_arrows_from("t1", "exit") == []
    graph_view = sorted(k for _, _, k in canvas.graph.out_edges("c1", keys=True))
    assert graph_view == []


def test_removing_a_node_removes_its_arrows() -> None:
    """Arrows touching a removed node go with it."""
    canvas = _canvas()
    canvas.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    canvas.add_arrow({"id": "e2", "from": "t1", "to": "c1"})
    gone = canvas.remove_node("c1")
    assert sorted(a.id for a in gone) == ["e1", "e2"] and canvas.arrows() == []


def test_nodes_get_defaults_and_bad_fields_are_named() -> None:
    """Defaults of FORMAT.md fill in; a wrong field names itself."""
    agent = Node.build({"id": "a", "type": "agent"}, "w")
    assert agent.data["status"] == "waiting" and agent.data["dangerous"] is False
    card = Node.build({"id": "c", "type": "card", "package": "p"}, "w")
    assert card.data["visible"] is True
    with pytest.raises(InvalidNode, match="dangerous"):
        Node.build({"id": "a", "type": "agent", "dangerous": "yes"}, "w")
    with pytest.raises(InvalidNode, match="unknown type"):
        Node.build({"id": "a", "type": "robot"}, "w")
    with pytest.raises(InvalidNode, match="colour"):
        Node.build({"id": "n", "type": "note", "colour": "red"}, "w")


def test_store_round_trip(tmp_path) -> None:
    """What the store saves, it loads: workspaces, nodes, arrows."""
    db = open_database(tmp_path / "c.db")
    store = CanvasStore(db)
    canvas = _canvas()
    with write_transaction(db):
        store.save_workspace(Workspace("w1", "/tmp/w1"))
        store.save_workspace(Workspace("w2", "/tmp/w2"))
        for node in canvas.nodes():
            store.save_node(node)
        store.save_arrow(canvas.add_arrow({"id": "e1", "from": "c1", "to": "a1"}))
    db.close()
    workspaces, loaded = CanvasStore(open_database(tmp_path / "c.db")).load(lambda n: None)
    assert sorted(workspaces) == ["w1", "w2"]
    assert [n.id for n in loaded.nodes()] == ["a1", "c1", "t1", "x1"]
    assert loaded.arrow_between("a1", "c1").id == "e1"
    assert db.conn is not None


def test_several_plain_arrows_between_two_nodes() -> None:
    """The smallest id connects, from either end; removing one leaves the others."""
    canvas = _canvas()
    for arrow_id, src, dst in (("e5", "c1", "a1"), ("e2", "a1", "c1"), ("e9", "c1", "a1")):
        canvas.add_arrow({"id": arrow_id, "from": src, "to": dst})
    assert canvas.arrow_between("c1", "a1").id == "e2" == canvas.arrow_between("a1", "c1").id
    canvas.remove_arrow("e2")
    assert canvas.arrow_between("a1", "c1").id == "e5" == canvas.arrow_between("c1", "a1").id
    canvas.remove_arrow("e5")
    canvas.remove_arrow("e9")
    assert canvas.arrow_between("c1", "a1") is None and canvas.arrow_between("a1", "c1") is None
    canvas.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    canvas.remove_node("a1")
    assert canvas.arrow_between("c1", "a1") is None


def test_loaded_nodes_with_the_same_data_do_not_share_it(tmp_path) -> None:
    """Data parsed once at load is copied per node: changing one node's dict leaves the rest."""
    db = open_database(tmp_path / "c.db")
    store = CanvasStore(db)
    with write_transaction(db):
        store.save_workspace(Workspace("w1", "/tmp/w1"))
        for i in range(3):
            store.save_node(Node.build({"id": f"a{i}", "type": "agent"}, "w1"))
            store.save_node(Node.build({"id": f"n{i}", "type": "todo",
                                        "items": [{"id": "x", "text": "x"}]}, "w1"))
    _ws, loaded = CanvasStore(db).load(lambda n: None)
    for kind, change in (("a", lambda d: d.update(status="working")),
                         ("n", lambda d: d["items"].append({"id": "y", "text": "y"}))):
        nodes = [loaded.node(f"{kind}{i}") for i in range(3)]
        for changed in nodes:
            before = [copy.deepcopy(n.data) for n in nodes]
            change(changed.data)
            for node, was in zip(nodes, before):
                if node is not changed:
                    assert node.data == was, f"{node.id} changed with {changed.id}"


def test_an_unknown_node_field_is_told_with_the_fields_the_type_takes() -> None:
    """A misspelt field names the node's type and its own fields (round 34: it read
    "unknown field 'nme' for a agent" and named none)."""
    with pytest.raises(InvalidNode) as caught:
        Node.build({"id": "a1", "type": "agent", "nme": "Bob"}, "w1")
    assert caught.value.reason == "bad-field"
    assert str(caught.value).endswith("node a1: unknown field 'nme' for a node of type agent "
                                      "(its own fields: dangerous, name, status, tool)")
