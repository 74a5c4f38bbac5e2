"""A tool call's arguments are checked reading a bounded number of errors, at the top
(``_ERRORS_READ``) and in each branch of ``anyOf``/``oneOf`` (``BRANCH_ERRORS``): an
agent's array of 30,000 wrong items is not 30,000 error objects on the service's loop.

(Found by the round's review: jsonschema's ``anyOf``/``oneOf`` built every error of every
branch as their error's context, past the bound at the top; 300,000 items took ~5 s.)
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import exceptions

from engine.core.tools import tool_args_problem

_ITEMS = 30_000


def _built(schema: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> int:
    count = 0
    init = exceptions._Error.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal count
        count += 1
        init(self, *args, **kwargs)

    monkeypatch.setattr(exceptions._Error, "__init__", counting)
    problem = tool_args_problem(schema, {"xs": [0] * _ITEMS}, 10**7)
    assert problem is not None and problem[0].startswith("args.xs"), problem
    return count


@pytest.mark.parametrize("keyword", ["anyOf", "oneOf"])
def test_errors_built_stay_bounded_under_anyof(keyword: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    plain = {"type": "object",
             "properties": {"xs": {"type": "array", "items": {"type": "string"}}}}
    branched = {"type": "object", "properties": {"xs": {keyword: [
        {"type": "array", "items": {"type": "string"}}, {"type": "null"}]}}}
    # GIVEN the bound holds for a plain array schema
    assert _built(plain, monkeypatch) <= 1_000
    # WHEN the same array schema is one branch of an anyOf / oneOf
    # THEN the errors built stay bounded too, not one per wrong item
    built = _built(branched, monkeypatch)
    assert built <= 1_000, f"{built} errors built for {_ITEMS} wrong items under {keyword}"


@pytest.mark.parametrize("schema", [
    {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
    {"anyOf": [{"type": "string"}, {"type": "null"}]},
    {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"}]},
    {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"minItems": 3}]},
])
@pytest.mark.parametrize("value", [1, 2, 3.5, "a", None, [], ["a"], [1, 2, 3], {}])
def test_any_of_and_one_of_agree_with_jsonschema(schema: dict[str, Any], value: Any) -> None:
    from jsonschema import Draft202012Validator

    from engine.core.toolschema import tool_validator

    assert tool_validator(schema).is_valid(value) == \
        Draft202012Validator(schema).is_valid(value)
