"""A tool's input schema holds only printable text, as its description does (SPEC §2,
§9): every key and string in it reaches a connected agent as the tool's schema, which no
install review shows.

Found in round 20: a description was held to printable text on one line, but the
same text in the schema (its ``description``, a property's ``title`` or name, an
``enum`` value) could carry terminal escapes, a right-to-left override or a newline
to the agent, through `arrowgate mcp`'s tool list.
"""

from __future__ import annotations

import pytest

from engine.core.errors import ManifestInvalid
from engine.core.manifest import parse_manifest


def _manifest(schema: object) -> dict[str, object]:
    return {"name": "acme.t", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "t", "description": "fine", "input": schema}]}


@pytest.mark.parametrize("schema, where", [
    ({"type": "object", "description": "\x1b]0;title\x07 hi"}, "$.tools[0].input.description"),
    ({"type": "object", "properties": {"q": {"type": "string", "title": "a\nIGNORE"}}},
     "$.tools[0].input.properties.q.title"),
    ({"type": "object", "properties": {"\u202eexe.txt": {"type": "string"}}},
     "$.tools[0].input.properties"),
    ({"type": "object", "properties": {"q": {"enum": ["ok", "\x1b[2J"]}}},
     "$.tools[0].input.properties.q.enum[1]"),
])
def test_a_schema_with_control_characters_is_refused(schema: object, where: str) -> None:
    with pytest.raises(ManifestInvalid) as info:
        parse_manifest(_manifest(schema))
    assert any(path.startswith(where) and "control characters" in what
               for path, what in info.value.problems), info.value.problems


def test_a_printable_schema_is_taken() -> None:
    schema = {"type": "object", "description": "Search the notes — «quoted», 日本語",
              "properties": {"q": {"type": "string", "pattern": "^[a-z]+\\n?$",
                                   "enum": ["a", "b c"]}}}
    assert parse_manifest(_manifest(schema)).tool_list[0].input == schema
