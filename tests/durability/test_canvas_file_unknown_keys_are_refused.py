"""A canvas file with a key arrowgate does not know is refused, naming the key (SPEC §2's
rule for unknown fields, kept for `arrowgate import`): at the top level (beside JSON
Canvas 1.0's ``nodes`` and ``edges`` and arrowgate's own ``arrowgate``) and inside the
``arrowgate`` key (beside ``version``, ``nodes``, ``edges``), and a ``version`` of that
key other than 1. Nothing is imported. JSON Canvas 1.0 defines only ``nodes`` and
``edges`` at the top level and says nothing of other keys being kept or ignored.

Found in round 21: ``arrowgate import`` dropped unknown top-level keys quietly (and a
file's ``"arrowgate": {"version": 2}`` was read as version 1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from canvas.errors import InvalidNode
from canvas.jsoncanvas import from_json_canvas
from engine import InvalidRequest

_NODE = {"id": "n1", "type": "text", "text": "hi", "x": 0, "y": 0, "width": 1, "height": 1}


def _doc(**extra: Any) -> dict[str, Any]:
    return {"nodes": [dict(_NODE)], "edges": [], **extra}


BAD = [
    (_doc(metadata={"version": "1.0-1.0"}), "$.metadata", "unknown key"),
    (_doc(Edges=[]), "$.Edges", "unknown key"),
    (_doc(arrowgate={"version": 1, "nodes": {}, "edges": {}, "grants": {"x": 1}}),
     "$.arrowgate.grants", "unknown key"),
    (_doc(arrowgate={"version": 2, "nodes": {}, "edges": {}}), "$.arrowgate.version",
     "version 1"),
]


@pytest.mark.parametrize("doc, where, what", BAD, ids=["metadata", "case", "own", "version"])
def test_the_conversion_names_the_key(doc: dict[str, Any], where: str, what: str) -> None:
    with pytest.raises(InvalidNode) as err:
        from_json_canvas(doc)
    assert where in str(err.value) and what in str(err.value), str(err.value)


def test_known_keys_still_import() -> None:
    assert [n["id"] for n in from_json_canvas(_doc()).nodes] == ["n1"]
    assert from_json_canvas(_doc(arrowgate={"version": 1, "nodes": {}, "edges": {}})).nodes


def test_a_huge_unknown_key_is_named_cut_short() -> None:
    with pytest.raises(InvalidNode) as err:
        from_json_canvas(_doc(**{"k" * 100_000 + "\x1b[2J": 1}))
    assert len(str(err.value)) < 400 and "\x1b" not in str(err.value)


@pytest.mark.parametrize("doc, where, what", BAD, ids=["metadata", "case", "own", "version"])
async def test_nothing_is_imported(make_engine: Any, tmp_path: Path, doc: dict[str, Any],
                                   where: str, what: str) -> None:
    engine = make_engine()
    with pytest.raises(InvalidRequest, match="bad-canvas|unknown key|version 1"):
        await engine.import_canvas("board", tmp_path, doc)
    assert "board" not in engine.state.workspaces
    assert engine.state.canvas.nodes() == []


def test_the_import_command_refuses_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from engine.app.cli import main
    from engine.effects import operator

    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    path = tmp_path / "board.canvas"
    path.write_text(json.dumps(BAD[0][0]))
    assert main(["import", str(path), "--db", str(tmp_path / "new.db")]) != 0
    out = capsys.readouterr()
    assert "$.metadata" in out.err and "unknown key" in out.err
