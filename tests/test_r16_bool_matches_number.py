"""r16: ``result`` matching treats ``true``/``false`` as equal to ``1``/``0``.

FORMAT.md: "other values equal" — JSON ``false`` and ``0`` are different values
(and different types on the wire). ``matches`` (engine/app/replay.py) keeps bools
out of its numeric branch but then falls back to Python ``expected == actual``,
where ``False == 0`` and ``True == 1``. usage.get answers ``{"tokens": 0, ...}``;
a case that says ``{"tokens": false}`` passes, and so would a case saying
``{"done": false}`` against an engine that answered ``0``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.replay import matches, run_case

CASE = {
    "name": "r16 bool is not a number",
    "packages": {"acme.p": {"manifest": {"name": "acme.p", "version": "1.0.0",
                                         "permissions": {"usage.read": {}}},
                            "files": {"index.js": "//"}, "grant": "required"}},
    "nodes": [{"id": "c1", "type": "card", "package": "acme.p"}],
}


async def test_false_does_not_match_zero_in_a_case(tmp_path: Path) -> None:
    case = dict(CASE, steps=[{"do": "call", "card": "c1", "call": "usage.get",
                              "expect": {"result": {"tokens": False}}}])
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    result = await run_case(path)
    assert result.steps[0].got["result"]["tokens"] == 0
    assert not isinstance(result.steps[0].got["result"]["tokens"], bool)
    assert not result.passed, "expected tokens false, the engine said 0, and the case passed"


@pytest.mark.parametrize("expected, actual", [(False, 0), (True, 1), (0, False), (1, True),
                                              ([True], [1]), ({"done": False}, {"done": 0})])
def test_matches_keeps_bools_and_numbers_apart(expected: object, actual: object) -> None:
    assert not matches(expected, actual)
