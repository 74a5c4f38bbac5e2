"""A tool whose input schema has a local `$ref` that does not resolve (or resolves to
something that is not a schema) passes manifest validation and install; every call of
that tool is then a 500 with a traceback in the server's output, and nothing is logged.

`Draft202012Validator.check_schema` checks the schema's shape, not its references;
at call time jsonschema raises `_WrappedReferencingError` (Unresolvable) or
`AttributeError`, which `schema_problem` (engine/core/tools.py:151-154, catching only
RecursionError, ValueError, TypeError) lets through.

SPEC §2: a manifest that fails validation is refused with MANIFEST_INVALID listing the
problem; §10.1: a refused call is a 200 with the Decision, never an HTTP error; §8:
every refusal is logged. Expected: refused at offer/install, or the call refused
(INVALID_ARGUMENT, logged) — never a 500.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .served import canvas, serve

SCHEMAS = {
    "missing": {"type": "object", "properties": {"s": {"$ref": "#/$defs/missing"}}},
    "not-a-schema": {"type": "object", "properties": {"s": {"$ref": "#/properties/x/type"},
                                                      "x": {"type": "string"}}},
}


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_a_dangling_ref_is_refused_not_a_500(tmp_path: Path, kind: str) -> None:
    manifest = {"name": "acme.ref", "version": "1.0.0", "permissions": {},
                "tools": [{"name": "t", "input": SCHEMAS[kind]}]}
    with serve(tmp_path) as served:
        try:
            canvas(served, tmp_path / "ws", manifest)
        except AssertionError as exc:
            assert "MANIFEST_INVALID" in str(exc)
            return  # refused at offer or install: fine
        with served.client(served.mint("agent:a1")) as agent:
            r = agent.post("/v1/tool-calls", json={"agent": "a1", "card": "c1", "tool": "t",
                                                   "args": {"s": "x"}})
        assert r.status_code == 200, r.text
        assert r.json()["decision"]["code"] == "INVALID_ARGUMENT"
        with served.client() as op:
            rows = op.get("/v1/log").json()["rows"]
        assert [row["call"] for row in rows] == ["tool:t"]
