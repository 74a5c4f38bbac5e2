"""A tool schema's patterns match in time linear in the text (RE2), and a pattern RE2
cannot compile is refused at offer, naming its path.

SPEC §9 validates the arguments against the tool's schema; §8 "No card can exhaust the
store", §8.3 "File work never blocks the engine's other calls": no single call, least
of all a refused one, may freeze the service.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from engine.core.errors import ManifestInvalid
from engine.core.manifest import parse_manifest
from engine.core.tools import tool_args_problem

from .served import canvas, serve

MANIFEST = {"name": "acme.re", "version": "1.0.0", "permissions": {},
            "tools": [{"name": "t", "input": {
                "type": "object",
                "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}}]}


def test_a_backtracking_pattern_does_not_stop_the_service(tmp_path: Path) -> None:
    """A pattern that backtracks in Python's `re` is matched by RE2: the service answers.

    (Found by a helper: ``^(a+)+$`` against ``"a"*40 + "!"`` held the event loop for
    minutes.)
    """
    with serve(tmp_path) as served:
        canvas(served, tmp_path / "ws", MANIFEST)
        with served.client(served.mint("agent:a1"), timeout=60) as agent:
            answers: list[dict[str, Any]] = []

            def call() -> None:
                answers.append(agent.post("/v1/tool-calls", json={
                    "agent": "a1", "card": "c1", "tool": "t",
                    "args": {"s": "a" * 40 + "!"}}).json()["decision"])

            # GIVEN the call under way WHEN the operator asks for health THEN it answers
            caller = threading.Thread(target=call, daemon=True)
            caller.start()
            time.sleep(0.5)
            assert served.health_within(2.0), "the service's loop is stuck in one regex match"
            caller.join(30)
        assert [(a["code"], a["reason"]) for a in answers] == [("INVALID_ARGUMENT", "args.s")]


def test_patterns_are_matched_as_json_schema_says() -> None:
    """`pattern`, `patternProperties` and `additionalProperties` beside it still check."""
    schema = {"type": "object", "properties": {"s": {"pattern": "^a+$"}},
              "patternProperties": {"^x_": {"type": "integer"}},
              "additionalProperties": False}
    assert tool_args_problem(schema, {"s": "aaa", "x_1": 3}, 1000) is None
    assert tool_args_problem(schema, {"s": "ab"}, 1000) == ("args.s", "'ab' does not match '^a+$'")
    assert tool_args_problem(schema, {"x_1": "3"}, 1000) == (
        "args.x_1", "'3' is not of type 'integer'")
    path, what = tool_args_problem(schema, {"y": 1}, 1000) or ("", "")
    assert (path, "'y' was unexpected" in what) == ("args", True)


@pytest.mark.parametrize(("schema", "where"), [
    ({"type": "string", "pattern": "(a)\\1"}, "$.tools[0].input.pattern"),
    ({"properties": {"s": {"pattern": "a(?=b)"}}}, "$.tools[0].input.properties.s.pattern"),
    ({"patternProperties": {"(?<!x)y": {}}}, '$.tools[0].input.patternProperties["(?<!x)y"]'),
])
def test_a_pattern_re2_cannot_compile_is_refused_at_offer(schema: object, where: str) -> None:
    """Backreferences and lookaround are MANIFEST_INVALID, naming the pattern's path."""
    manifest = {"name": "acme.re", "version": "1.0.0", "permissions": {},
                "tools": [{"name": "t", "input": schema}]}
    with pytest.raises(ManifestInvalid) as refused:
        parse_manifest(manifest)
    assert [p for p in refused.value.problems if p[0] == where and "RE2" in p[1]], \
        refused.value.problems


def test_unevaluated_properties_beside_pattern_properties_is_refused_at_offer() -> None:
    """jsonschema matches patternProperties with `re` for unevaluatedProperties: refused."""
    manifest = {"name": "acme.re", "version": "1.0.0", "permissions": {},
                "tools": [{"name": "t", "input": {
                    "patternProperties": {"^a": {}}, "unevaluatedProperties": False}}]}
    with pytest.raises(ManifestInvalid) as refused:
        parse_manifest(manifest)
    assert [p[0] for p in refused.value.problems] == [
        "$.tools[0].input.unevaluatedProperties"]
