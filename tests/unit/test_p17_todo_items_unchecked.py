"""p17: a todo's ``items`` (a taskboard's ``tasks``) are not checked beyond being a list.

`Node.check` (canvas/model.py, ``isinstance(value, kind)`` for ``items``/``tasks``)
accepts any list, e.g. ``["buy milk"]``, ``[{"id": 1, "text": None, "done": "x"}]``
or a task whose column is NaN. README ("Nodes": ``items`` are ``{"id", "text",
"done"}``, "a wrong type ... is refused") and a careful user expect INVALID_NODE.
What the engine accepted then breaks it: a connected card's allowed
``cards.todo.read`` raises a bare ValueError out of `engine.call` (no Decision, no
log row: engine/effects/world.py `_card_content`, ``dict(item)``), and
`export_canvas` raises AttributeError (canvas/jsoncanvas.py `_title`, ``i.get``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import InvalidNode
from tests.conftest import manifest, offer_install


@pytest.mark.parametrize("node", [
    {"id": "t1", "type": "todo", "items": ["buy milk"]},
    {"id": "t1", "type": "todo", "items": [{"id": 1, "text": None, "done": "x"}]},
    {"id": "t1", "type": "taskboard", "tasks": [{"id": "a", "text": "b",
                                                  "column": float("nan")}]},
])
async def test_malformed_items_are_refused(make_engine: Any, tmp_path: Path,
                                           node: dict[str, Any]) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    with pytest.raises(InvalidNode):
        await engine.add_node(node, workspace="w1")
    assert engine.state.canvas.node("t1") is None


async def test_what_add_node_accepted_can_be_read_by_a_card_and_exported(
        make_engine: Any, tmp_path: Path) -> None:
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.u", {"cards.connected": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.u"}, workspace="w1")
    try:
        await engine.add_node({"id": "t1", "type": "todo", "items": ["buy milk"]},
                              workspace="w1")
    except InvalidNode:
        return  # refused: nothing to read
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "t1"})
    decision = await engine.call("c1", "cards.todo.read", "t1", {})  # raised ValueError
    assert decision.outcome in ("ok", "denied")
    engine.export_canvas("w1")  # raised AttributeError
