"""A canvas file holding a value of the wrong kind anywhere is refused naming where, never
a crash (rule: hostile input never crashes; bad input gets a clear error and changes
nothing).

(Found in round 30 by fuzzing `arrowgate import` with atheris: a node whose ``type``
was an object or an array was looked up in a set of the foreign node types, and the
import ended in a ``TypeError: unhashable type`` traceback.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from canvas import CanvasError
from canvas.jsoncanvas import from_json_canvas
from engine import InvalidRequest
from engine.app.cli import main

#: Values of every JSON kind but text (the commonest a field is meant to hold).
ODD = [{"a": 1}, ["text"], [], {}, 1, 2.5, True, None]


def _doc() -> dict[str, Any]:
    box = {"x": 0, "y": 0, "width": 10, "height": 10}
    return {"nodes": [{"id": "a1", "type": "text", "text": "a", **box},
                      {"id": "n1", "type": "text", "text": "note", **box},
                      {"id": "g1", "type": "group", **box}],
            "edges": [{"id": "e1", "fromNode": "a1", "toNode": "n1", "label": "a -> b"},
                      {"id": "e2", "fromNode": "g1", "toNode": "n1"}],
            "arrowgate": {"version": 1, "nodes": {"a1": {"type": "agent", "name": "A"}},
                          "edges": {"e1": {}}}}


def _set(doc: dict[str, Any], where: tuple[Any, ...], value: Any) -> dict[str, Any]:
    target: Any = doc
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    return doc


#: Every place a canvas file holds a value that arrowgate reads.
PLACES = [("nodes", 0, "type"), ("nodes", 0, "id"), ("nodes", 0, "text"),
          ("nodes", 0, "color"), ("nodes", 2, "type"), ("edges", 0, "id"),
          ("edges", 0, "fromNode"), ("edges", 0, "toNode"), ("edges", 0, "fromEnd"),
          ("edges", 0, "toEnd"), ("edges", 0, "label"), ("edges", 0, "color"),
          ("edges", 1, "fromNode"), ("arrowgate", "nodes", "a1"),
          ("arrowgate", "nodes", "a1", "type"), ("arrowgate", "edges", "e1"),
          ("arrowgate", "edges", "e1", "from_port"), ("arrowgate", "version")]


@pytest.mark.parametrize("where", PLACES, ids=[".".join(map(str, p)) for p in PLACES])
async def test_a_value_of_any_kind_anywhere_is_read_or_refused(
        make_engine: Any, tmp_path: Path, where: tuple[Any, ...]) -> None:
    """The conversion reads the file or refuses it as a canvas error; the engine's review
    of it is made or refused as an invalid request; nothing else escapes."""
    engine = make_engine()
    for value in ODD:
        doc = _set(_doc(), where, value)
        try:
            from_json_canvas(doc)
        except CanvasError:
            pass
        try:
            await engine.preview_import("w", tmp_path, doc)
        except InvalidRequest:
            pass
    assert "w" not in engine.state.workspaces


@pytest.mark.parametrize("kind", [{"x": 1}, ["text"]], ids=["object", "array"])
def test_the_import_command_names_a_node_type_of_the_wrong_kind(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: Any) -> None:
    """`arrowgate import --dry-run` of a node whose type is no text: exit 2, one line
    naming the node, no traceback, no database made."""
    doc = _doc()
    doc["nodes"][0]["type"] = kind
    path = tmp_path / "board.canvas"
    path.write_text(json.dumps(doc))

    assert main(["import", "--dry-run", str(path), "--db", str(tmp_path / "new.db")]) == 2
    err = capsys.readouterr().err
    assert "$.nodes[0]" in err and "Traceback" not in err, err
    assert not (tmp_path / "new.db").exists()
