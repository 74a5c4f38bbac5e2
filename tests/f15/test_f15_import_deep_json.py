"""f15: `arrowgate import` of a deeply nested JSON file ends in a RecursionError traceback.

``json.loads`` raises RecursionError (not a ValueError) past its depth, and
`_cmd_import` (engine/app/cli.py) catches only OSError and ValueError, as
`main` does; manifests (`loads_manifest`) and case files (`load_case`) turn the
same input into a one-line error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects import operator


def test_a_deeply_nested_canvas_file_is_a_one_line_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    path = tmp_path / "deep.canvas"
    path.write_text('{"nodes": ' + "[" * 100_000 + "]" * 100_000 + "}")
    try:
        code = main(["import", str(path), "--db", str(tmp_path / "a.db"), "--workspace", "w"])
    except RecursionError:
        pytest.fail("arrowgate import raised RecursionError (a traceback for the person)")
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("arrowgate: ") and err.count("\n") == 1, err
