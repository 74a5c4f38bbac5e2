"""A case field that may be left out is not ``null``: ``t``, ``expect.retry_after`` and
``expect.deliveries`` given as ``null`` make the case invalid, named by file, step and
field (exit 2), and nothing is played.

(Found by a helper: the models took ``null`` for these fields, then the replay crashed on
``float(None)`` / ``None.items()``: "the replay failed: TypeError", no step, no field,
exit 1, the case's other steps never played.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.replay import run_case, run_files

CASE = {
    "name": "r16 null fields",
    "packages": {"acme.p": {"manifest": {"name": "acme.p", "version": "1.0.0",
                                         "permissions": {"usage.read": {}}},
                            "files": {"index.js": "//"}, "grant": "required"}},
    "nodes": [{"id": "c1", "type": "card", "package": "acme.p"}],
}


@pytest.mark.parametrize("extra, field", [({"t": None}, "t"),
                                          ({"expect": {"retry_after": None}}, "retry_after"),
                                          ({"expect": {"deliveries": None}}, "deliveries")])
async def test_null_field_is_refused_by_step_and_field(tmp_path: Path, extra: dict,
                                                       field: str) -> None:
    """A null field makes the case invalid, the message naming the step and the field."""
    step = {"do": "call", "card": "c1", "call": "usage.get", **extra}
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(CASE, steps=[step])))
    result = await run_case(path)
    assert result.invalid, f"not refused as invalid; the replay said: {result.error!r}"
    assert "step 0" in result.error and field in result.error


def test_a_null_field_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``arrowgate replay`` reports the null field on stderr and exits 2 (an invalid case)."""
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(CASE, steps=[{"do": "history", "t": None}])))
    assert run_files([str(path)]) == 2
    assert "step 0 (history) field 't': must not be null" in capsys.readouterr().err
