"""`arrowgate import` of JSON nested too deeply to read is a one-line error, exit 2.

``json.loads`` raises RecursionError (not a ValueError) past its depth; the
import turns it into a line naming the file, as manifests and case files do.
(Found by a helper: a RecursionError traceback.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects import operator


def test_import_of_deeply_nested_json_is_a_one_line_error(
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
