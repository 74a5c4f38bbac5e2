"""A node update judges the todo items and taskboard tasks it changes, not those it keeps.

`Canvas.updated_node` builds the whole node again; entries an older version
stored unchecked (`World._card_content` expects them: "what an older version
stored unchecked ... is given as kept") stay as they are until a call changes
``items`` / ``tasks``: moving the node (``layout``), the change the app makes
most, works; new entries are checked as ever.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine import Engine, World
from engine.core.errors import InvalidNode


async def test_a_legacy_todo_can_still_be_moved(tmp_path: Path) -> None:
    """A todo with an item older code stored unchecked moves; its items stay as stored.

    (Found by a helper: every `set_node` re-checked every item, refusing the move
    with ``INVALID_NODE: items[1] must be an object``.)
    """
    db = tmp_path / "s.db"
    engine = Engine.open(db, world=World(net=None, fs=None))
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await engine.add_node({"id": "t1", "type": "todo", "items": []}, workspace="w1")
    engine.close()
    # GIVEN a todo as older code could store it (an item that is not an object)
    conn = sqlite3.connect(db)
    data = json.loads(conn.execute("select data from nodes where id = 't1'").fetchone()[0])
    data["items"] = [{"id": "t1-1", "text": "x", "done": False}, "loose"]
    conn.execute("update nodes set data = ? where id = 't1'", [json.dumps(data)])
    conn.commit()
    conn.close()
    engine = Engine.open(db, world=World(net=None, fs=None))
    try:
        # WHEN the operator moves it on the canvas
        moved = await engine.set_node(
            "t1", {"layout": {"x": 5, "y": 5, "width": 100, "height": 100}})
        # THEN it moves; its items are as they were
        assert moved.data["layout"]["x"] == 5
        assert moved.data["items"][1] == "loose"
    finally:
        engine.close()


async def test_changing_a_legacy_todos_items_checks_them(tmp_path: Path) -> None:
    """Setting ``items`` judges every item given: a bad one is refused, nothing changes."""
    db = tmp_path / "s.db"
    engine = Engine.open(db, world=World(net=None, fs=None))
    try:
        (tmp_path / "ws").mkdir()
        await engine.create_workspace("w1", tmp_path / "ws")
        await engine.add_node({"id": "t1", "type": "todo", "items": []}, workspace="w1")
        # WHEN the items are set with one that is not an object
        with pytest.raises(InvalidNode, match=r"items\[0\]"):
            await engine.set_node("t1", {"items": ["loose"]})
        # THEN the todo is as it was
        assert engine.state.canvas.node("t1").data["items"] == []
    finally:
        engine.close()
