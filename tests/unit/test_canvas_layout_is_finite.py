"""A canvas's layout numbers are finite and bounded, so what export writes is JSON.

A JSON Canvas file's x, y, width and height must be finite numbers of at most
`canvas.model.MAX_COORDINATE` either way: NaN, Infinity and ``1e999`` are
refused on import (INVALID_NODE naming the field; the command line refuses
the non-JSON tokens while reading), so `arrowgate export` never writes
``NaN`` — a "JSON Canvas 1.0" file no strict JSON reader can open.
(Found by a helper: NaN/Infinity coordinates were imported and exported as
``NaN``, canvas/jsoncanvas.py `_layout` checking only the type.)
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main
from engine.core.errors import InvalidNode
from engine.effects import operator


def _strict(text: str) -> object:
    def refuse(token: str) -> object:
        raise ValueError(f"{token} is not JSON")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999"])
def test_export_after_import_is_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], value: str) -> None:
    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    path = tmp_path / "board.canvas"
    path.write_text('{"nodes": [{"id": "n1", "type": "text", "text": "hi", "x": %s, "y": 0, '
                    '"width": 100, "height": 50}], "edges": []}' % value)
    db = str(tmp_path / "a.db")
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # the person says yes to the review
    code = main(["import", str(path), "--db", db, "--workspace", "w"])
    if code != 0:  # refused as not JSON Canvas: fine
        assert code == 2
        return
    capsys.readouterr()
    out = tmp_path / "out.canvas"
    assert main(["export", "--db", db, "--workspace", "w", "-o", str(out)]) == 0
    _strict(out.read_text())  # ValueError: "NaN is not JSON"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e10])
async def test_the_engine_refuses_a_layout_number_that_is_not_finite_or_too_large(
        world: Engine, tmp_path: Path, value: float) -> None:
    """The Python API (and so the service) too: import and add_node, INVALID_NODE."""
    doc = {"nodes": [{"id": "m1", "type": "text", "text": "hi", "x": value, "y": 0,
                      "width": 100, "height": 50}], "edges": []}
    with pytest.raises(InvalidNode, match=r"\$\.nodes\[0\]\.x"):
        await world.import_canvas("w9", tmp_path, doc)
    assert "w9" not in world.state.workspaces
    layout = {"x": 0, "y": value, "width": 1, "height": 1}
    with pytest.raises(InvalidNode, match="layout needs finite numbers"):
        await world.add_node({"id": "m2", "type": "note", "layout": layout}, workspace="w1")
    assert world.state.canvas.node("m2") is None
