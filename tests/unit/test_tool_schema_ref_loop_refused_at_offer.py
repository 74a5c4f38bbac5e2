"""A tool schema whose references loop without reaching into the argument (``{"$ref":
"#"}``, two ``$defs`` each applying the other through ``allOf``) is refused when its
manifest is offered, MANIFEST_INVALID naming the ``$ref`` that closes the loop; a
recursive schema that descends into the argument (a tree, a list of lists) is accepted.

(Left by round 35's review: such a schema was accepted at offer, then every call, or
every call the loop was reached by, was refused with a RecursionError.)
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.core.errors import ManifestInvalid
from engine.core.manifest import parse_manifest
from engine.core.tools import tool_args_problem


def _offer(schema: dict[str, Any]) -> Any:
    return parse_manifest({"name": "acme.t", "version": "1.0.0", "permissions": {},
                           "tools": [{"name": "t", "input": schema}]})


@pytest.mark.parametrize(("schema", "where"), [
    ({"$ref": "#"}, '$.tools[0].input["$ref"]'),
    ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
      "$ref": "#/$defs/a"}, '$.tools[0].input["$defs"].b.allOf[0]["$ref"]'),
    # Strings pass the first branch; anything else recursed until Python's limit.
    ({"anyOf": [{"type": "string"}, {"$ref": "#"}]}, '$.tools[0].input.anyOf[1]["$ref"]'),
    ({"if": {"not": {"$ref": "#"}}}, '$.tools[0].input.if.not["$ref"]'),
])
def test_a_loop_of_references_is_refused_at_offer(schema: dict[str, Any], where: str) -> None:
    with pytest.raises(ManifestInvalid) as caught:
        _offer(schema)
    message = str(caught.value)
    assert "MANIFEST_INVALID" in message, message
    assert f"{where}: closes a loop of references that never reaches into the argument" \
        in message, message


def test_recursion_into_the_argument_is_accepted() -> None:
    tree = {"type": "object", "properties": {"name": {"type": "string"},
                                             "kids": {"type": "array",
                                                      "items": {"$ref": "#"}}}}
    tool = _offer(tree).tool("t")
    assert tool is not None and tool.input is not None
    args = {"name": "a", "kids": [{"name": "b", "kids": [{"name": 3}]}]}
    assert tool_args_problem(tool.input, args, 10**6) == (
        "args.kids[0].kids[0].name", "3 is not of type 'string'")
    nested = {"$defs": {"n": {"anyOf": [{"type": "integer"},
                                        {"type": "array", "items": {"$ref": "#/$defs/n"}}]}},
              "type": "object", "properties": {"xs": {"$ref": "#/$defs/n"}}}
    tool = _offer(nested).tool("t")
    assert tool is not None and tool.input is not None
    assert tool_args_problem(tool.input, {"xs": [1, [2, [3]]]}, 10**6) is None
