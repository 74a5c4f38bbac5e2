"""A node, arrow or workspace id is one path segment of the service's routes, by any way
in: ``add_node``, ``add_arrow``, ``create_workspace`` and ``import_canvas`` refuse an id
holding "/", and the ids "." and "..", with INVALID_NODE / INVALID_ARROW /
INVALID_ARGUMENT (reason ``bad-id``) naming what was wrong, and nothing changes. Ids
already in a store are left as they are: the engine still reads and removes them.

(Found by a helper: ids holding "/" were made, then no route of the service reached
them, even escaped as ``%2F``; "." and ".." a URL client resolves away.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from engine import Engine
from engine.core.errors import InvalidArgument, InvalidArrow, InvalidNode
from engine.core.text import id_problem

#: (a bad id, what the error names).
BAD = [("c/3", "holds '/'"), ("/", "holds '/'"), ("a/", "holds '/'"),
       (".", "dot segment"), ("..", "dot segment")]


def _state(engine: Engine) -> tuple[Any, ...]:
    canvas = engine.state.canvas
    return (sorted(engine.state.workspaces), sorted(n.id for n in canvas.nodes()),
            sorted(a.id for a in canvas.arrows()))


def _named(message: str, bad: str, named: str) -> bool:
    return named in message and repr(bad) in message


@pytest.mark.parametrize(("bad", "named"), BAD)
async def test_a_node_id_that_is_not_one_segment_is_refused(world: Engine, bad: str,
                                                            named: str) -> None:
    before = _state(world)
    with pytest.raises(InvalidNode) as raised:
        await world.add_node({"id": bad, "type": "note"}, workspace="w1")
    assert _named(raised.value.message, bad, named) and raised.value.reason == "bad-id"
    assert _state(world) == before


@pytest.mark.parametrize(("bad", "named"), BAD)
async def test_an_arrow_id_that_is_not_one_segment_is_refused(world: Engine, bad: str,
                                                              named: str) -> None:
    before = _state(world)
    with pytest.raises(InvalidArrow) as raised:
        await world.add_arrow({"id": bad, "from": "c1", "to": "a2"})
    assert _named(raised.value.message, bad, named) and raised.value.reason == "bad-id"
    assert _state(world) == before


@pytest.mark.parametrize(("bad", "named"), BAD)
async def test_a_workspace_id_that_is_not_one_segment_is_refused(
        world: Engine, tmp_path: Path, bad: str, named: str) -> None:
    before = _state(world)
    with pytest.raises(InvalidArgument) as raised:
        await world.create_workspace(bad, tmp_path)
    assert _named(raised.value.message, bad, named) and raised.value.reason == "bad-id"
    assert _state(world) == before


def _doc(node_id: str = "m1", edge_id: str = "f1") -> dict[str, Any]:
    box = {"type": "text", "x": 0, "y": 0, "width": 1, "height": 1}
    return {"nodes": [{"id": node_id, "text": "x", **box}, {"id": "b", "text": "y", **box}],
            "edges": [{"id": edge_id, "fromNode": node_id, "toNode": "b"}]}


@pytest.mark.parametrize("bad", ["x/y", ".."])
@pytest.mark.parametrize("where", ["workspace", "node", "edge"])
async def test_an_import_with_such_an_id_is_refused_whole(world: Engine, tmp_path: Path,
                                                          where: str, bad: str) -> None:
    before = _state(world)
    error = {"workspace": InvalidArgument, "node": InvalidNode, "edge": InvalidArrow}[where]
    doc = _doc(**({"node_id": bad} if where == "node" else
                  {"edge_id": bad} if where == "edge" else {}))
    with pytest.raises(error) as raised:
        await world.import_canvas(bad if where == "workspace" else "w9", tmp_path, doc)
    assert repr(bad) in raised.value.message and raised.value.reason == "bad-id"
    assert _state(world) == before


@pytest.mark.parametrize("good", ["a.b", "...", ".x", "x.", "a\\b", "50%", "a b?#"])
def test_ids_a_segment_can_carry_are_taken(good: str) -> None:
    assert id_problem("node", good) is None


async def test_an_id_already_in_the_store_is_left_as_it_is(make_engine: Any,
                                                           tmp_path: Path) -> None:
    """Written by an older engine: it loads, and the engine still removes it."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    with mock.patch("engine.services.nodes.id_problem", lambda _kind, _value: None):
        await engine.add_node({"id": "n/1", "type": "note"}, workspace="w1")
        await engine.add_node({"id": "..", "type": "note"}, workspace="w1")
        await engine.add_arrow({"id": "e/1", "from": "n/1", "to": ".."})
    engine.close()
    reopened = make_engine()
    assert {"n/1", ".."} <= {n.id for n in reopened.state.canvas.nodes()}
    await reopened.remove_arrow("e/1")
    await reopened.remove_node("n/1")
    assert "n/1" not in {n.id for n in reopened.state.canvas.nodes()}
