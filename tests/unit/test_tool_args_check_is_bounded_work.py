"""Checking a tool call's arguments does a bounded amount of work, in proportion to the
arguments' size: a schema whose references share subschemas cannot make one call
exponential, nor a large list of names (``enum``, ``properties``) be read once per item.

(Found in round 19: 17 ``$defs`` each ``{"allOf": [{"$ref": next}, {"$ref": next}]}``
were accepted at offer and made a call with ``{}`` walk 2^17 schemas (~3 s on the
service's loop; 40 of them, forever); and ``enum`` compared an argument with each of
its values in turn, so 2,000 items against a 20,000-value enum took 35 s.)

The work is counted (`tests.work`), not timed: a walk stopped by its budget does as
much work for a schema four levels deeper; a long list or object of the schema is read
once, not once for each item of the arguments.
"""

from __future__ import annotations

from typing import Any

from engine.core.manifest import parse_manifest
from engine.core.tools import tool_args_problem
from tests.work import ReadDict, ReadList, calls


def _input(schema: dict[str, Any]) -> dict[str, Any]:
    manifest = parse_manifest({"name": "acme.t", "version": "1.0.0", "permissions": {},
                               "tools": [{"name": "t", "input": schema}]})
    tool = manifest.tool("t")
    assert tool is not None and tool.input is not None
    return tool.input


def _doubling(levels: int, keyword: str = "allOf") -> dict[str, Any]:
    defs: dict[str, Any] = {f"a{i}": {keyword: [{"$ref": f"#/$defs/a{i + 1}"},
                                                {"$ref": f"#/$defs/a{i + 1}"}]}
                            for i in range(levels)}
    defs[f"a{levels}"] = {"type": "object"}
    return {"$defs": defs, "$ref": "#/$defs/a0"}


def test_shared_references_are_refused_not_walked() -> None:
    schema = _input(_doubling(17))
    problem, work = calls(lambda: tool_args_problem(schema, {}, 10**6))
    assert problem is not None and problem[0] == "args", problem
    assert "too costly" in problem[1], problem
    # Stopped at the budget: four levels fewer (a sixteenth of the walk) is as much work.
    _, shallower = calls(lambda: tool_args_problem(_input(_doubling(13)), {}, 10**6))
    assert work < 1.25 * shallower, (work, shallower)


def test_shared_references_under_unevaluated_properties_are_bounded() -> None:
    # jsonschema's unevaluatedProperties walks the references again, on its own.
    schema = _doubling(17)
    schema["unevaluatedProperties"] = False
    schema = _input(schema)
    problem, work = calls(lambda: tool_args_problem(schema, {}, 10**6))
    assert problem is not None and "too costly" in problem[1], problem
    shallow = _doubling(13)
    shallow["unevaluatedProperties"] = False
    _, shallower = calls(lambda: tool_args_problem(_input(shallow), {}, 10**6))
    assert work < 1.25 * shallower, (work, shallower)


def test_a_modest_schema_with_large_arguments_is_still_checked() -> None:
    schema = _input({"type": "object", "properties": {"xs": {
        "type": "array", "items": {"type": "object", "required": ["n"],
                                   "properties": {"n": {"type": "integer", "minimum": 0}}}}}})
    args = {"xs": [{"n": i} for i in range(20_000)]}
    assert tool_args_problem(schema, args, 10**7) is None
    args["xs"][-1] = {"n": -1}
    assert tool_args_problem(schema, args, 10**7) == ("args.xs[19999].n",
                                                      "-1 is less than the minimum of 0")


def test_enum_is_looked_up_not_scanned() -> None:
    schema = _input({"type": "object", "properties": {"xs": {"items": {
        "enum": [*range(5_000), "five", [1, {"a": True}]]}}}})
    items = schema["properties"]["xs"]["items"]
    items["enum"] = values = ReadList(items["enum"])
    assert tool_args_problem(schema, {"xs": [4_999] * 1_000}, 10**6) is None
    assert values.reads <= 2, f"the enum's 5,002 values were read {values.reads} times"
    # JSON Schema's equality: 1.0 is 1, true is not 1, arrays and objects by value.
    assert tool_args_problem(schema, {"xs": [1.0, "five", [1, {"a": True}]]}, 10**6) is None
    problem = tool_args_problem(schema, {"xs": [0, True]}, 10**6)
    assert problem is not None and problem[0] == "args.xs[1]", problem
    problem = tool_args_problem(schema, {"xs": [[1, {"a": 1}]]}, 10**6)
    assert problem is not None and problem[0] == "args.xs[0]", problem


def test_a_long_properties_list_read_per_item_is_bounded() -> None:
    # As wide as a tool's input schema may be (`MAX_SCHEMA_BYTES`, round 21).
    names = {f"p{i}": {"type": "string"} for i in range(1_000)}
    schema = _input({"$defs": {"wide": {"properties": names}}, "type": "object",
                     "properties": {"xs": {"items": {"$ref": "#/$defs/wide"}}}})
    wide = schema["$defs"]["wide"]
    wide["properties"] = named = ReadDict(wide["properties"])
    problem = tool_args_problem(schema, {"xs": [{}] * 3_000}, 10**6)
    assert named.reads <= 3, f"the 1,000 names were read {named.reads} times for 3,000 items"
    # Not read per item at all (round 19's review): only the names an item has are
    # looked up, so the check is quick, and still a check.
    assert problem is None, problem
    problem = tool_args_problem(schema, {"xs": [{}] * 2_999 + [{"p7": 7}]}, 10**6)
    assert problem == ("args.xs[2999].p7", "7 is not of type 'string'"), problem
