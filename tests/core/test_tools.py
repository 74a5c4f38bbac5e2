"""Tools (SPEC §9) as pure rules: argument checks, the causal chain, the agent's view."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.core.checks import denial
from engine.core.tools import agent_side, tool_args_problem, tool_chain

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"},
                   "tags": {"type": "array", "items": {"type": "string"}},
                   "meta": {"type": "object", "properties": {"n": {"type": "integer"}},
                            "required": ["n"]}},
    "required": ["title"],
    "additionalProperties": False,
}


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("args", [[], "text", 3, ["title"]])
def test_arguments_must_be_an_object(args: Any) -> None:
    """Anything but a JSON object is refused at ``args``."""
    assert tool_args_problem(SCHEMA, args, 1000) == ("args", "must be an object")


def test_none_means_no_arguments() -> None:
    """No arguments at all are an empty object: fine for a tool without a schema."""
    assert tool_args_problem(None, None, 1000) is None
    assert tool_args_problem(SCHEMA, None, 1000) == ("args.title", "is required")


def test_not_json_or_too_deep() -> None:
    """Non-JSON values and nesting past the manifest bound are refused with their path."""
    assert tool_args_problem(None, {"x": {"y": float("nan")}}, 10**6) == (
        "args.x.y", "nan is not a JSON number")
    assert tool_args_problem(None, {"x": [1, object()]}, 10**6) == (
        "args.x[1]", "a object is not JSON")
    path, what = tool_args_problem(SCHEMA, _nested(70), 10**6) or ("", "")
    assert path.startswith("args.a.a") and what == "nested more than 64 levels deep"


def test_larger_than_max_payload() -> None:
    """The JSON text of the arguments must fit max_payload bytes (UTF-8)."""
    args = {"title": "é" * 50}
    size = len(json.dumps(args).encode("utf-8"))
    assert tool_args_problem(SCHEMA, args, size) is None
    assert tool_args_problem(SCHEMA, args, size - 1) == (
        "args", f"is {size} bytes, more than max_payload ({size - 1})")


def test_schema_errors_name_the_arguments_path() -> None:
    """A schema error names the argument (the missing one itself), not the object around it."""
    assert tool_args_problem(SCHEMA, {"title": "t"}, 1000) is None
    assert tool_args_problem(SCHEMA, {}, 1000) == ("args.title", "is required")
    assert tool_args_problem(SCHEMA, {"title": 3}, 1000) == (
        "args.title", "3 is not of type 'string'")
    assert tool_args_problem(SCHEMA, {"title": "t", "tags": ["a", 2]}, 1000) == (
        "args.tags[1]", "2 is not of type 'string'")
    assert tool_args_problem(SCHEMA, {"title": "t", "meta": {}}, 1000) == (
        "args.meta.n", "is required")
    path, what = tool_args_problem(SCHEMA, {"title": "t", "extra": 1}, 1000) or ("", "")
    assert path == "args" and "'extra'" in what


def test_of_several_bad_items_the_first_is_named() -> None:
    """Of equally deep errors the earliest is named; a branch's errors as jsonschema picks.

    (Found in round 15: jsonschema's `best_match` takes the max of its relevance, whose
    path part ranks later siblings higher, so 64 bad tags were reported as `tags[63]`.)
    """
    args = {"title": "t", "tags": ["a", *range(100)]}
    assert tool_args_problem(SCHEMA, args, 10_000) == (
        "args.tags[1]", "0 is not of type 'string'")
    either = {"anyOf": [{"type": "string"},
                        {"type": "object", "properties": {"a": {"type": "array",
                                                               "items": {"type": "string"}}}}]}
    assert tool_args_problem(either, {"a": [1, 2, 3]}, 10_000) == (
        "args.a[0]", "1 is not of type 'string'")


def test_no_schema_takes_no_arguments() -> None:
    """A tool without an input schema refuses any argument, naming the first by name."""
    assert tool_args_problem(None, {}, 1000) is None
    assert tool_args_problem(None, {"b": 1, "a": 2}, 1000) == (
        "args.a", "is not an argument of this tool (it takes none)")


def test_tool_chain() -> None:
    """The agent's own chain when it ends with that agent, else the agent alone; then the card."""
    assert tool_chain(None, "a1", "c1") == ["a1", "c1"]
    assert tool_chain(["c0", "a1"], "a1", "c1") == ["c0", "a1", "c1"]
    assert tool_chain(("c0", "a1"), "a1", "c1") == ["c0", "a1", "c1"]
    assert tool_chain(["c0", "a2"], "a1", "c1") == ["a1", "c1"]  # someone else's chain
    assert tool_chain([], "a1", "c1") == ["a1", "c1"]
    assert tool_chain("a1", "a1", "c1") == ["a1", "c1"]  # not a list: ignored


def test_agent_side_rewords_the_refusal_for_the_agent() -> None:
    """`agents.prompt` refused to the card reads, for the calling agent, as its tool call."""
    refused = denial("agents.prompt", "c1", "PERMISSION_DENIED", package="acme.p", target="a1",
                     reason="not-connected", why="no arrow connects c1 and a1")
    told = agent_side(refused, "a1", "relay")
    assert told.message == ("PERMISSION_DENIED: agent a1 may not call c1.relay (acme.p): "
                            "not-connected — no arrow connects c1 and a1")
    assert (told.code, told.reason, told.card) == (refused.code, refused.reason, "c1")
    # A long tool name is cut to 100 characters, with its length (`text.named`, round 31:
    # it had been cut to 64 with nothing to say so), its escape left out.
    long = agent_side(refused, "a1", "x" * 100 + "\x1b[31m")
    assert "c1." + "x" * 100 + "…[105 characters] (acme.p)" in long.message
    assert "\x1b" not in long.message
    # A message about another target is left as it is.
    other = denial("agents.prompt", "c1", "QUEUE_FULL", package="acme.p", target="a2")
    assert agent_side(other, "a1", "relay") is other


def test_a_schema_gets_one_validator_and_a_new_schema_its_own() -> None:
    """A tool's schema is compiled once, not for every call; a schema object of its
    own (a manifest updated) gets its own validator, whatever its text."""
    from engine.core import tools

    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    first = tools._validator(schema)
    assert tools._validator(schema) is first
    assert tool_args_problem(schema, {"q": "x"}, 1000) is None
    assert tools._validator(schema) is first
    stricter = {**schema, "additionalProperties": False}
    assert tools._validator(stricter) is not first
    assert tool_args_problem(stricter, {"q": "x", "n": 1}, 1000) is not None
    assert tool_args_problem(schema, {"q": "x", "n": 1}, 1000) is None

