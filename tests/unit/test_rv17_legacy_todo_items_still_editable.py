"""rv17: a todo an older version stored with an item of another shape can no longer be moved.

ab49896 checks todo items and taskboard tasks in `Node.check`, which
`Canvas.updated_node` runs on the whole node for every `set_node`. A todo whose
items older code stored unchecked (the fix's own comment in `World._card_content`
expects them: "what an older version stored unchecked ... is given as kept")
still loads, but any change of another field -- moving it on the canvas
(``layout``), the change the app makes most -- is refused with
``INVALID_NODE: items[1] must be an object``. Old data should be judged when
it is written (the fields the call changes), not block every later edit.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from engine import Engine, World


async def test_rv17_a_legacy_todo_can_still_be_moved(tmp_path: Path) -> None:
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
