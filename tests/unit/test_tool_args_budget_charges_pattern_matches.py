"""Every key a ``patternProperties`` pattern is matched against is charged to the
argument check's step budget.

Rule: the step budget of an argument check (`engine.core.toolschema.check_budget`,
50,000 steps plus 4 a byte of the arguments) bounds the work a schema can make one
check do; ``patternProperties`` (and ``additionalProperties``, which matches the same
patterns) costs one step for each key each pattern is tried on, so a schema of many
patterns against an object of many keys is refused as too costly, within its budget.

(Found in round 21: ``patternProperties`` was charged one step a pattern, once, while
it tried every pattern on every key: 2,000 patterns against 5,000 keys were ten
million RE2 searches, minutes of the service's loop, for a few thousand steps.)
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.core import toolschema
from engine.core.manifest import parse_manifest
from engine.core.tools import tool_args_problem

_PATTERNS = 200
_KEYS = 2_000


def _input(schema: dict[str, Any]) -> dict[str, Any]:
    manifest = parse_manifest({"name": "acme.t", "version": "1.0.0", "permissions": {},
                               "tools": [{"name": "t", "input": schema}]})
    tool = manifest.tool("t")
    assert tool is not None and tool.input is not None
    return tool.input


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    searches = [0]
    real = toolschema._matches

    def counted(pattern: str, text: str) -> bool:
        searches[0] += 1
        return real(pattern, text)

    monkeypatch.setattr(toolschema, "_matches", counted)
    return searches


_HOSTILE = {f"^p{i}x$": {"type": "string"} for i in range(_PATTERNS)}


@pytest.mark.parametrize("extra", [None, False, {"type": "integer"}],
                         ids=["patternProperties", "additional-false", "additional-schema"])
def test_many_patterns_against_many_keys_are_too_costly(monkeypatch: pytest.MonkeyPatch,
                                                        extra: Any) -> None:
    schema: dict[str, Any] = {"type": "object", "patternProperties": _HOSTILE}
    if extra is not None:
        schema["additionalProperties"] = extra
    schema = _input(schema)
    args = {f"k{i}": 1 for i in range(_KEYS)}
    budget = 50_000 + 4 * len(json.dumps(args).encode())
    searches = _counting(monkeypatch)
    problem = tool_args_problem(schema, args, 10**7)
    assert problem is not None and "too costly" in problem[1], problem
    # Stopped within its budget: not every pattern tried on every key first.
    assert searches[0] <= budget, f"{searches[0]} searches for a budget of {budget} steps"


def test_a_few_patterns_over_many_keys_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The charge is the work done: a legitimate schema is still checked, not refused."""
    schema = _input({"type": "object", "patternProperties": {"^n_": {"type": "integer"},
                                                              "^s_": {"type": "string"}},
                     "additionalProperties": False})
    args: dict[str, Any] = {f"n_{i}": i for i in range(5_000)}
    assert tool_args_problem(schema, args, 10**7) is None
    args["n_77"] = "seven"
    assert tool_args_problem(schema, args, 10**7) == ("args.n_77",
                                                      "'seven' is not of type 'integer'")
    args["n_77"] = 77
    args["x"] = 1
    problem = tool_args_problem(schema, args, 10**7)
    assert problem is not None and "'x' was unexpected" in problem[1], problem
