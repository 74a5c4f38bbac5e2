"""f15: a canvas file with NaN or Infinity coordinates imports, and export then writes
a file that is not JSON.

Python's ``json.loads`` reads the non-JSON tokens ``NaN``, ``Infinity`` (and
``1e999``); `canvas.jsoncanvas._layout` checks only ``type(value) in (int,
float)``, so they are kept, and `arrowgate export` writes them back as
``NaN`` / ``Infinity`` — a "JSON Canvas 1.0" file that JSON Canvas apps (and
any strict JSON reader) cannot open. The service refuses these tokens in
bodies (engine/service/jsonread.py) and case files refuse them by name; the
canvas import is the way around.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main
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
    code = main(["import", str(path), "--db", db, "--workspace", "w"])
    if code != 0:  # refused as not JSON Canvas: fine
        assert code == 2
        return
    capsys.readouterr()
    out = tmp_path / "out.canvas"
    assert main(["export", "--db", db, "--workspace", "w", "-o", str(out)]) == 0
    _strict(out.read_text())  # ValueError: "NaN is not JSON"
