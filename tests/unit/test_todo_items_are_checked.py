"""A todo's ``items`` and a taskboard's ``tasks`` hold entries of the documented shape.

README ("Nodes"): an item is ``{"id", "text", "done"}``, a task ``{"id", "text",
"column"}``. `add_node` and `set_node` refuse any other entry as INVALID_NODE
naming the entry (not an object, an unknown key, a missing ``id``/``text``, a
field of the wrong type) and change nothing; ``done`` and ``column`` may be left
out (``false``, ``"todo"``). Entries an older version stored unchecked are left
as they are: a card's ``cards.todo.read`` gives them as kept and `export_canvas`
still writes the canvas.

(Found by a helper: any list was accepted, e.g. ``["buy milk"]``; a connected
card's allowed cards.todo.read then raised a bare ValueError with no log row, and
export_canvas raised AttributeError.)
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, InvalidNode, World
from tests.conftest import manifest, offer_install


async def _canvas(make_engine: Any, tmp_path: Path) -> Engine:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    return engine


@pytest.mark.parametrize(("node", "named"), [
    ({"id": "t1", "type": "todo", "items": ["buy milk"]}, "items[0]"),
    ({"id": "t1", "type": "todo", "items": [{"id": 1, "text": None, "done": "x"}]}, "'id'"),
    ({"id": "t1", "type": "todo", "items": [{"id": "a", "text": "b", "done": "x"}]}, "'done'"),
    ({"id": "t1", "type": "todo", "items": [{"id": "a", "text": "b", "done": 1}]}, "'done'"),
    ({"id": "t1", "type": "todo", "items": [{"id": "a", "done": True}]}, "'text'"),
    ({"id": "t1", "type": "todo",
      "items": [{"id": "a", "text": "b"}, {"id": "c", "text": "d", "due": "mon"}]}, "items[1]"),
    ({"id": "t1", "type": "taskboard",
      "tasks": [{"id": "a", "text": "b", "column": float("nan")}]}, "'column'"),
    ({"id": "t1", "type": "taskboard", "tasks": [None]}, "tasks[0]"),
])
async def test_malformed_items_are_refused(make_engine: Any, tmp_path: Path,
                                           node: dict[str, Any], named: str) -> None:
    """An entry not of the documented shape: INVALID_NODE naming it, no node added."""
    engine = await _canvas(make_engine, tmp_path)
    with pytest.raises(InvalidNode, match=named.replace("[", r"\[").replace("]", r"\]")):
        await engine.add_node(node, workspace="w1")
    assert engine.state.canvas.node("t1") is None


async def test_set_node_refuses_malformed_items_and_changes_nothing(
        make_engine: Any, tmp_path: Path) -> None:
    """`set_node` checks the entries as `add_node` does; the node keeps its items."""
    engine = await _canvas(make_engine, tmp_path)
    await engine.add_node({"id": "t1", "type": "todo",
                           "items": [{"id": "a", "text": "b", "done": True}]}, workspace="w1")
    with pytest.raises(InvalidNode, match="items"):
        await engine.set_node("t1", {"items": [{"id": "a", "text": 5, "done": True}]})
    assert engine.state.canvas.node("t1").data["items"] == [
        {"id": "a", "text": "b", "done": True}]


async def test_done_and_column_may_be_left_out(make_engine: Any, tmp_path: Path) -> None:
    """An entry without ``done`` / ``column`` takes ``false`` / ``"todo"``."""
    engine = await _canvas(make_engine, tmp_path)
    todo = await engine.add_node({"id": "t1", "type": "todo",
                                  "items": [{"id": "a", "text": "b"}]}, workspace="w1")
    board = await engine.add_node({"id": "t2", "type": "taskboard",
                                   "tasks": [{"id": "a", "text": "b"}]}, workspace="w1")
    assert todo.data["items"] == [{"id": "a", "text": "b", "done": False}]
    assert board.data["tasks"] == [{"id": "a", "text": "b", "column": "todo"}]


async def test_what_add_node_accepted_can_be_read_by_a_card_and_exported(
        make_engine: Any, tmp_path: Path) -> None:
    """A connected card reads the items it was given; the canvas exports."""
    engine = await _canvas(make_engine, tmp_path)
    await offer_install(engine, manifest("acme.u", {"cards.connected": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.u"}, workspace="w1")
    items = [{"id": "a", "text": "buy milk", "done": False}]
    await engine.add_node({"id": "t1", "type": "todo", "items": items}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    decision = await engine.call("c1", "cards.todo.read", "t1", {})
    assert decision.outcome == "ok" and decision.value == items
    assert "buy milk" in json.dumps(engine.export_canvas("w1"))


async def test_items_an_older_version_stored_unchecked_still_load_read_and_export(
        make_engine: Any, tmp_path: Path, db_path: Path) -> None:
    """Entries kept before the check are left as they are: readers do not crash on them."""
    engine = await _canvas(make_engine, tmp_path)
    await offer_install(engine, manifest("acme.u", {"cards.connected": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.u"}, workspace="w1")
    await engine.add_node({"id": "t1", "type": "todo"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    engine.close()
    kept = ["buy milk", {"id": 1, "text": None, "done": "x"}]
    with sqlite3.connect(db_path) as db:  # what an older version accepted
        db.execute("update nodes set data = ? where id = 't1'", [json.dumps({"items": kept})])
    db.close()
    again = Engine.open(db_path, world=World(net=None, fs=None))
    try:
        decision = await again.call("c1", "cards.todo.read", "t1", {})
        assert decision.outcome == "ok" and decision.value == kept
        assert "buy milk" in json.dumps(again.export_canvas("w1"))
        added = await again.call("c1", "cards.todo.add", "t1", {"text": "eggs"})
        assert added.outcome == "ok", added
    finally:
        again.close()
