"""A canvas file's node and edge ids must be valid Unicode: one with a lone surrogate
is INVALID_NODE / INVALID_ARROW naming it, one line, exit 2, nothing written.

JSON text may spell ``"\\ud800"``, which ``json.loads`` reads as a lone
surrogate; no store can write it. The engine's id check
(`engine.core.text.id_problem`: no control or invisible character, and a
surrogate is one) refuses it before anything is written (SPEC §8 "Bounds":
text that is not valid Unicode is invalid input).
(Found by a helper: a UnicodeEncodeError traceback from the store's insert.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects import operator


@pytest.mark.parametrize("where", ["node", "edge"])
def test_an_import_id_with_a_lone_surrogate_is_a_one_line_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], where: str) -> None:
    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    node_id, edge_id = ("a\\ud800", "e") if where == "node" else ("a", "e\\ud800")
    text = ('{"nodes": [{"id": "%s", "type": "text", "text": "x", "x": 0, "y": 0, '
            '"width": 1, "height": 1}, {"id": "b", "type": "text", "text": "y", "x": 0, '
            '"y": 0, "width": 1, "height": 1}], "edges": [{"id": "%s", "fromNode": "%s", '
            '"toNode": "b"}]}') % (node_id, edge_id, node_id)
    path = tmp_path / "board.canvas"
    path.write_text(text)
    try:
        code = main(["import", str(path), "--db", str(tmp_path / "a.db"), "--workspace", "w"])
    except UnicodeError as exc:
        pytest.fail(f"arrowgate import raised {type(exc).__name__}: {exc}")
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("arrowgate: ") and err.count("\n") == 1, err
