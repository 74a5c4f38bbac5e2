"""``replay --json`` answers an invalid case file as every verb under ``--json`` answers an
error: one JSON object a line on standard error (its ``message`` and the ``case``), beside
the JSON line on standard output that counts it; exit 2.

(Found in round 25: the invalid case's error went to standard error as text under
``--json``, the one error line of a verb there that was not JSON.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main

CASES = Path(__file__).resolve().parents[1] / "conformance" / "cases"


def test_an_invalid_case_under_json_is_a_json_error_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN a valid and an invalid case WHEN replayed with --json THEN stdout and stderr
    are JSON lines, stderr's naming the invalid case, exit 2."""
    bad = tmp_path / "bad\x1b[2J.json"
    bad.write_text("{}")
    assert main(["replay", "--json", str(CASES / "revoke.json"), str(bad)]) == 2
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()][-1] == {
        "passed": 1, "failed": 1, "invalid": 1}
    errors = [json.loads(line)["error"] for line in err.splitlines()]
    assert len(errors) == 1, err
    assert errors[0]["case"] == str(bad) and "steps" in errors[0]["message"]


def test_an_invalid_case_without_json_is_one_text_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["replay", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"{bad}: field 'steps'")
    # The closing line says the failure is an invalid file, as the JSON's "invalid" does
    # (round 34: "0 passed, 1 failed" alone read as a case the engine got wrong).
    assert out.endswith("replay: 0 passed, 1 failed (1 of them not played: an invalid case "
                        "file)\n"), out
