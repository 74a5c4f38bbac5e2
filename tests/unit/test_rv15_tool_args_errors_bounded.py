"""A tool call's arguments are checked reading at most the first 64 errors
(engine/core/tools.py ``_ERRORS_READ``), so that an agent's array of 30,000 wrong items
is not 30,000 error objects built on the service's event loop (c6f4fbf).

The bound holds only for errors yielded at the top: jsonschema's ``anyOf`` and ``oneOf``
build every error of every branch (``list(validator.descend(...))``) before yielding
one, as the error's context. A card's harmless schema ``{"anyOf": [array of strings,
null]}`` lets an agent's wrong array of N items build N errors, whatever the islice: on
this machine 300,000 items took ~5 s against ~0.3 s without the anyOf."""

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
def test_rv15_errors_built_stay_bounded_under_anyof(keyword: str,
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
