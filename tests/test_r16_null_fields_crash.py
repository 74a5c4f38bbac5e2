"""r16: ``null`` in ``t``, ``expect.retry_after`` or ``expect.deliveries`` passes validation,
then crashes the replay.

FORMAT.md: "A case file that is not valid (... a field of the wrong type) fails
with a message naming the file, the step and the field" — and run_files exits 2
for an invalid case. The step models declare these fields ``X | None`` (Step.t,
Expect.retry_after, Expect.deliveries in engine/app/casefile.py), so ``null`` is
accepted; the replay then does ``float(written["t"])`` (replay.py ``step``),
``float(expect["retry_after"])`` / ``expect["deliveries"].items()``
(``check_expectation``) and dies: the case is reported as
"the replay failed: TypeError ..." (no step, no field), counted as a failed case
(exit 1, not 2), and its remaining steps are never played.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.replay import run_case

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
async def test_null_is_refused_by_step_and_field(tmp_path: Path, extra: dict,
                                                 field: str) -> None:
    step = {"do": "call", "card": "c1", "call": "usage.get", **extra}
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(CASE, steps=[step])))
    result = await run_case(path)
    assert result.invalid, f"not refused as invalid; the replay said: {result.error!r}"
    assert "step 0" in result.error and field in result.error
