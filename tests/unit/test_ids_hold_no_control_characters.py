"""Node, arrow and workspace ids hold no control or invisible character, by any way in.

An id is how a person tells one thing on the canvas from another — in held
prompts, log rows, listings. One holding ESC, a bidi override, a zero-width
or invisible character (or a lone surrogate, which no store can write) could
pass for another id or rewrite the line that shows it. So the engine refuses
such an id where it is made: ``add_node``, ``add_arrow``, ``create_workspace``
and ``import_canvas`` (which the service and the command line call), with
INVALID_NODE / INVALID_ARROW / INVALID_ARGUMENT naming the character, and
nothing changes. (Found by a helper: ids accepted such characters through
every way of adding them.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main
from engine.core.errors import InvalidArgument, InvalidArrow, InvalidNode
from engine.effects import operator

#: (a bad id, what the error names).
BAD = [("n\x1b[2J", "U+001B (ESC)"), ("n\u202eevil", "U+202E"), ("n\u200bx", "U+200B"),
       ("n\u115fx", "U+115F"), ("n\ud800", "U+D800"), ("line\nforged", "newline")]


def _state(engine: Engine) -> tuple[Any, ...]:
    canvas = engine.state.canvas
    return (sorted(engine.state.workspaces), sorted(n.id for n in canvas.nodes()),
            sorted(a.id for a in canvas.arrows()))


@pytest.mark.parametrize(("bad", "named"), BAD)
async def test_a_node_id_with_a_control_character_is_refused(world: Engine, bad: str,
                                                              named: str) -> None:
    before = _state(world)
    with pytest.raises(InvalidNode) as raised:
        await world.add_node({"id": bad, "type": "note"}, workspace="w1")
    assert named in raised.value.message and raised.value.reason == "bad-id"
    assert _state(world) == before


@pytest.mark.parametrize(("bad", "named"), BAD)
async def test_an_arrow_id_with_a_control_character_is_refused(world: Engine, bad: str,
                                                               named: str) -> None:
    before = _state(world)
    with pytest.raises(InvalidArrow) as raised:
        await world.add_arrow({"id": bad, "from": "c1", "to": "a2"})
    assert named in raised.value.message and raised.value.reason == "bad-id"
    assert _state(world) == before


@pytest.mark.parametrize(("bad", "named"), BAD)
async def test_a_workspace_id_with_a_control_character_is_refused(
        world: Engine, tmp_path: Path, bad: str, named: str) -> None:
    before = _state(world)
    with pytest.raises(InvalidArgument) as raised:
        await world.create_workspace(bad, tmp_path)
    assert named in raised.value.message
    assert _state(world) == before


def _doc(node_id: str = "m1", edge_id: str = "f1") -> dict[str, Any]:
    box = {"type": "text", "x": 0, "y": 0, "width": 1, "height": 1}
    return {"nodes": [{"id": node_id, "text": "x", **box}, {"id": "b", "text": "y", **box}],
            "edges": [{"id": edge_id, "fromNode": node_id, "toNode": "b"}]}


@pytest.mark.parametrize("where", ["workspace", "node", "edge"])
async def test_an_import_with_a_bad_id_is_refused_whole(world: Engine, tmp_path: Path,
                                                        where: str) -> None:
    before = _state(world)
    bad = "x\u202e"
    error = {"workspace": InvalidArgument, "node": InvalidNode, "edge": InvalidArrow}[where]
    doc = _doc(**({"node_id": bad} if where == "node" else
                  {"edge_id": bad} if where == "edge" else {}))
    with pytest.raises(error, match="U\\+202E"):
        await world.import_canvas(bad if where == "workspace" else "w9", tmp_path, doc)
    assert _state(world) == before


async def test_plain_ids_still_work(world: Engine, tmp_path: Path) -> None:
    """Spaces, accents, emoji with a zero width joiner: ids a person writes."""
    await world.add_node({"id": "note é 👩\u200d💻", "type": "note"}, workspace="w1")
    await world.create_workspace("mon espace", tmp_path)


def test_the_command_line_import_names_the_character(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    path = tmp_path / "board.canvas"
    path.write_text(json.dumps(_doc(node_id="n\x1b]0;x\x07")))
    db = tmp_path / "a.db"
    assert main(["import", str(path), "--db", str(db), "--workspace", "w"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arrowgate: ") and "U+001B (ESC)" in err and "\x1b" not in err
    assert err.count("\n") == 1
