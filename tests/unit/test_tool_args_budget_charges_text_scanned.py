"""Every character a pattern scans is charged to the argument check's step budget.

Rule: an RE2 search (``pattern``, and a ``patternProperties`` pattern tried on a key)
costs a step for each 16 characters of the text it scans, besides its one step, so a
schema that applies many patterns to one long string is refused as too costly within
its budget (`engine.core.toolschema.check_budget`), while a few patterns over any
text are checked as before.

(Found in round 21: a search was one step whatever the text's length: 1,000 patterns
under ``allOf`` against one string of 250 KB were 250 MB scanned on the service's
loop, about a second, for a few thousand steps of a budget of a million.)
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.core import toolschema
from engine.core.manifest import parse_manifest
from engine.core.tools import tool_args_problem


def _input(schema: dict[str, Any]) -> dict[str, Any]:
    manifest = parse_manifest({"name": "acme.t", "version": "1.0.0", "permissions": {},
                               "tools": [{"name": "t", "input": schema}]})
    tool = manifest.tool("t")
    assert tool is not None and tool.input is not None
    return tool.input


def _scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    chars = [0]
    real = toolschema._matches

    def counted(pattern: str, text: str) -> bool:
        chars[0] += len(text)
        return real(pattern, text)

    monkeypatch.setattr(toolschema, "_matches", counted)
    return chars


@pytest.mark.parametrize("where", ["pattern", "patternProperties"])
def test_many_patterns_over_one_long_text_are_too_costly(monkeypatch: pytest.MonkeyPatch,
                                                         where: str) -> None:
    long = "a" * 100_000
    if where == "pattern":
        # Each matches, and only once it has read the whole text: no error stops the check.
        patterns = [f"^a*(?:z{i})?$" for i in range(600)]
        schema = {"type": "object", "properties": {"text": {
            "type": "string", "allOf": [{"pattern": p} for p in patterns]}}}
        args: dict[str, Any] = {"text": long}
    else:
        patterns = [f"z{i}[0-9]+q" for i in range(600)]  # tried on the key, matching none
        schema = {"type": "object", "patternProperties": {p: {} for p in patterns}}
        args = {long: 1}
    budget = 50_000 + 4 * len(json.dumps(args).encode())
    chars = _scanned(monkeypatch)
    problem = tool_args_problem(_input(schema), args, 10**7)
    assert problem is not None and "too costly" in problem[1], problem
    assert chars[0] <= 16 * budget, f"{chars[0]} characters scanned for {budget} steps"


def test_a_few_patterns_over_long_texts_are_checked() -> None:
    schema = _input({"type": "object", "properties": {"lines": {"type": "array", "items": {
        "type": "string", "pattern": "^[a-z ]*$", "not": {"pattern": "forbidden"}}}}})
    args: dict[str, Any] = {"lines": ["some words " * 2_000 for _ in range(10)]}
    assert tool_args_problem(schema, args, 10**7) is None
    args["lines"][7] += "forbidden"
    problem = tool_args_problem(schema, args, 10**7)
    assert problem is not None and problem[0] == "args.lines[7]", problem
