"""A tool's arguments are checked by the engine's own draft 2020-12 validator in every
subschema, whatever ``$schema`` a subschema names: its patterns are matched by RE2,
never by Python's backtracking ``re``.

(Found in round 19: jsonschema's ``evolve`` picks a validator class by each subschema's
``$schema``, so ``{"$schema": "http://json-schema.org/draft-07/schema#", "pattern":
"^(a+)+$"}`` inside ``properties`` was matched by stock Draft 7 with ``re``: 24
characters took 0.6 s, 40 would freeze the service for days.)
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from engine.core.manifest import parse_manifest
from engine.core.tools import tool_args_problem

_DIALECTS = [
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2020-12/schema",
]


def _input(sub: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"x": sub}}
    manifest = parse_manifest({"name": "acme.t", "version": "1.0.0", "permissions": {},
                               "tools": [{"name": "t", "input": schema}]})
    tool = manifest.tool("t")
    assert tool is not None and tool.input is not None
    return tool.input


@pytest.mark.parametrize("dialect", _DIALECTS)
def test_a_subschema_pattern_is_matched_by_re2(dialect: str) -> None:
    # RE2's "$" is the end of the text; Python's also matches before a final newline:
    # a match here means the pattern went through `re`.
    schema = _input({"$schema": dialect, "pattern": "^abc$"})
    problem = tool_args_problem(schema, {"x": "abc\n"}, 10**6)
    assert problem is not None and problem[0] == "args.x", problem


@pytest.mark.parametrize("dialect", _DIALECTS)
def test_root_schema_keyword_reached_by_ref_is_matched_by_re2(dialect: str) -> None:
    schema = {"$schema": dialect, "type": "object",
              "properties": {"x": {"pattern": "^abc$"}, "again": {"$ref": "#"}}}
    manifest = parse_manifest({"name": "acme.t", "version": "1.0.0", "permissions": {},
                               "tools": [{"name": "t", "input": schema}]})
    tool = manifest.tool("t")
    assert tool is not None and tool.input is not None
    problem = tool_args_problem(tool.input, {"again": {"x": "abc\n"}}, 10**6)
    assert problem is not None and problem[0] == "args.again.x", problem


def test_catastrophic_pattern_under_draft_7_stays_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = _input({"$schema": "http://json-schema.org/draft-07/schema#",
                     "pattern": "^(a+)+$"})
    # Not timed (a loaded machine makes any check slow): Python's backtracking `re`
    # is simply never given the pattern. Every function of `re` compiles through
    # `re._compile`.
    given: list[Any] = []
    compile_ = re._compile  # type: ignore[attr-defined]

    def recorded(pattern: Any, flags: Any) -> Any:
        given.append(pattern)
        return compile_(pattern, flags)

    monkeypatch.setattr(re, "_compile", recorded)
    problem = tool_args_problem(schema, {"x": "a" * 24 + "!"}, 10**6)
    monkeypatch.undo()
    assert "^(a+)+$" not in given, "the pattern was matched by Python's re"
    assert problem is not None and problem[0] == "args.x", problem
