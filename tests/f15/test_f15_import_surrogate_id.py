"""f15: a canvas file whose node id holds a lone surrogate ends in a traceback.

JSON text may spell ``"\\ud800"``; ``json.loads`` reads it as a lone surrogate.
The import checks ids for type and emptiness only, then the store's
``insert``/``update`` of the node fails with UnicodeEncodeError, which neither
`Interchange.import_canvas` (engine/services/interchange.py) nor `main`
catches: a traceback instead of a one-line INVALID_NODE (nothing is written,
the transaction rolls back). SPEC §8 "Bounds" treats text that is not valid
Unicode as invalid input (INVALID_ARGUMENT), and case files refuse it by name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects import operator


@pytest.mark.parametrize("where", ["node", "edge"])
def test_an_id_with_a_lone_surrogate_is_a_one_line_error(
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
