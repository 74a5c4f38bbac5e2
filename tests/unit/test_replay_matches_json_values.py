"""``result`` matching is JSON equality: a bool equals only a bool (``false`` is not
``0``, ``true`` is not ``1``), and numbers compare exactly, ints beyond 2**53 too.

(Found by a helper: ``matches`` fell back to Python ``==``, where ``False == 0``: a case
expecting ``{"tokens": false}`` passed against usage.get's ``0``.)
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
    """A case expecting false where the engine answers 0 fails."""
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
    """A bool never matches a number, either way round, nested or not."""
    assert not matches(expected, actual)


@pytest.mark.parametrize("expected, actual, equal", [
    (2**53 + 1, 2**53 + 1, True), (2**53 + 1, 2**53, False), (2**53 + 1, float(2**53), False),
    (1, 1.0, True), (0.5, 0.5, True), (False, False, True), ({"$len": True}, [1], False),
    ({"$len": 1}, [1], True)])
def test_numbers_compare_exactly(expected: object, actual: object, equal: bool) -> None:
    """Numbers are equal only when they are the same number: no rounding through float."""
    assert matches(expected, actual) is equal
