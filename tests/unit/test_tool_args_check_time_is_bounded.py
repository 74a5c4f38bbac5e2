"""Checking a tool call's arguments holds the service's loop a bounded time, whatever
the schema and the arguments' size: the check's steps are at most `_STEPS_MOST`, not
4 a byte, and a keyword that reads the whole argument is charged for what it reads.

(Found in round 35: at 256 KiB of arguments the budget was 1.1 million steps, ~10 s on
the service's loop before the agent's rate limit, repeatable at will; a valid array of
87,000 integers under ``anyOf`` took 3.2 s; ``uniqueItems`` reached 4,096 times by
shared references over 35,000 items took 66 s, each time one step.)

The work is counted (`tests.work`), not timed. Realistic calls are still checked: an
array of a few thousand items, 20,000 rows of a checked object, nesting 20 deep.
"""

from __future__ import annotations

from typing import Any

from engine.core.manifest import parse_manifest
from engine.core.tools import _STEPS_MOST, tool_args_problem
from tests.work import calls

_MAX_PAYLOAD = 256 * 1024


def _input(schema: dict[str, Any]) -> dict[str, Any]:
    manifest = parse_manifest({"name": "acme.t", "version": "1.0.0", "permissions": {},
                               "tools": [{"name": "t", "input": schema}]})
    tool = manifest.tool("t")
    assert tool is not None and tool.input is not None
    return tool.input


def _doubling(levels: int, leaf: dict[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {f"a{i}": {"allOf": [{"$ref": f"#/$defs/a{i + 1}"},
                                                {"$ref": f"#/$defs/a{i + 1}"}]}
                            for i in range(levels)}
    defs[f"a{levels}"] = leaf
    return {"$defs": defs, "$ref": "#/$defs/a0"}


def _too_costly(problem: Any) -> None:
    assert problem is not None and problem[0] == "args", problem
    assert "too costly" in problem[1] and f"more than {_STEPS_MOST} steps" in problem[1], problem


def test_the_work_of_a_hostile_check_does_not_grow_with_the_arguments() -> None:
    schema = _input(_doubling(30, {"type": "object"}))
    small, work_small = calls(lambda: tool_args_problem(schema, {"pad": "x" * 16_000},
                                                        _MAX_PAYLOAD))
    large, work_large = calls(lambda: tool_args_problem(schema, {"pad": "x" * 250_000},
                                                        _MAX_PAYLOAD))
    assert small is not None and "too costly" in small[1], small
    _too_costly(large)
    # 16 KB of arguments were 114,000 steps; 250 KB, 1,050,000 (9 times the work) where
    # now at most `_STEPS_MOST`.
    assert work_large < 3 * work_small, (work_large, work_small)


def test_a_keyword_reading_the_whole_argument_is_charged_for_it() -> None:
    args = {"xs": list(range(35_000))}
    for leaf in ({"uniqueItems": True}, {"enum": [1]}):
        schema = _input(_doubling(12, {"properties": {"xs": leaf}}))
        problem, work = calls(lambda: tool_args_problem(schema, args, _MAX_PAYLOAD))  # noqa: B023
        _too_costly(problem)
        # 4,096 reads of 35,000 items would be 143 million items read.
        assert work < 4_000_000, (leaf, work)


def test_a_dense_valid_array_under_any_of_is_bounded() -> None:
    schema = _input({"type": "object", "properties": {"xs": {
        "type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}})
    # 87,000 items: refused as too costly rather than checked for seconds.
    _too_costly(tool_args_problem(schema, {"xs": [1] * 87_000}, _MAX_PAYLOAD))
    # A few thousand are checked, and still a check.
    assert tool_args_problem(schema, {"xs": [1, "a"] * 2_500}, _MAX_PAYLOAD) is None
    assert tool_args_problem(schema, {"xs": [1] * 4_999 + [None]}, _MAX_PAYLOAD) == (
        "args.xs[4999]", "None is not valid under any of the given schemas")


def test_realistic_calls_are_checked() -> None:
    row = {"type": "object", "required": ["id", "name"], "additionalProperties": False,
           "properties": {"id": {"type": "integer", "minimum": 0},
                          "name": {"type": "string", "maxLength": 200},
                          "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]},
                                   "uniqueItems": True},
                          "score": {"type": ["number", "null"]}}}
    schema = _input({"type": "object", "properties": {"rows": {"type": "array",
                                                               "items": row}}})
    rows = [{"id": i, "name": f"row {i}", "tags": ["a", "c"], "score": i / 3}
            for i in range(3_000)]
    assert tool_args_problem(schema, {"rows": rows}, _MAX_PAYLOAD) is None
    rows[2_345]["tags"] = ["a", "a"]
    problem = tool_args_problem(schema, {"rows": rows}, _MAX_PAYLOAD)
    assert problem is not None and problem[0] == "args.rows[2345].tags", problem
    # Nesting 20 deep, through a recursive reference.
    tree = _input({"$defs": {"node": {"type": "object", "properties": {
        "name": {"type": "string"}, "child": {"$ref": "#/$defs/node"}}}},
        "$ref": "#/$defs/node"})
    deep: dict[str, Any] = {"name": "leaf"}
    for i in range(20):
        deep = {"name": f"n{i}", "child": deep}
    assert tool_args_problem(tree, deep, _MAX_PAYLOAD) is None
    inner = deep
    for _ in range(19):
        inner = inner["child"]
    inner["child"]["name"] = 7
    problem = tool_args_problem(tree, deep, _MAX_PAYLOAD)
    assert problem == ("args" + ".child" * 20 + ".name", "7 is not of type 'string'"), problem
