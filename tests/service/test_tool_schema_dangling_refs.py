"""Every local `$ref` of a tool's input schema resolves to a schema, or the manifest
does not install (MANIFEST_INVALID naming it); and whatever checking the arguments
raises is the call's refusal (INVALID_ARGUMENT, a 200 Decision, logged), never a 500.

SPEC §2: a manifest that fails validation is refused with MANIFEST_INVALID listing the
problem; §10.1: a refused call is a 200 with the Decision; §8: every refusal is logged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.core import tools
from engine.core.manifest import json_path
from engine.core.tools import tool_args_problem

from .served import serve

SCHEMAS: dict[str, tuple[dict[str, Any], str]] = {
    "missing": ({"type": "object", "properties": {"s": {"$ref": "#/$defs/missing"}}},
                "does not resolve"),
    "not-a-schema": ({"type": "object", "properties": {"s": {"$ref": "#/properties/x/type"},
                                                       "x": {"type": "string"}}},
                     "is not a schema"),
}


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_a_dangling_ref_does_not_install(tmp_path: Path, kind: str) -> None:
    """A `$ref` to nowhere, or to what is not a schema, is MANIFEST_INVALID naming it.

    (Found by a helper: such a schema installed, then every call of the tool was a 500
    with a traceback and no log row.)
    """
    schema, problem = SCHEMAS[kind]
    manifest = {"name": "acme.ref", "version": "1.0.0", "permissions": {},
                "tools": [{"name": "t", "input": schema}]}
    with serve(tmp_path) as served, served.client() as op:
        offered = op.post("/v1/packages", json={"manifest": manifest})
        assert offered.status_code in (200, 201), offered.text  # stored, as offered
        r = op.post("/v1/packages/acme.ref/install", json={"grant": "required"})
    assert (r.status_code, r.json()["code"]) == (400, "MANIFEST_INVALID"), r.text
    [(path, what)] = [(p["path"], p["problem"]) for p in r.json()["problems"]]
    assert (path, problem in what) == (
        json_path(("tools", 0, "input", "properties", "s", "$ref")), True)


def test_an_exception_while_checking_refuses_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any exception raised while checking is the refusal, naming what was raised."""
    class Broken:
        def iter_errors(self, instance: object) -> Any:
            raise LookupError("the validator broke")

    monkeypatch.setattr(tools, "_validator", lambda schema: Broken())
    assert tool_args_problem({"type": "object"}, {"s": "x"}, 1000) == (
        "args", "cannot be checked against the tool's schema (LookupError: the validator broke)")


def test_a_stored_schema_with_a_dangling_ref_refuses_its_calls() -> None:
    """A schema that got past offer before this rule: each call refused, naming why."""
    schema, _ = SCHEMAS["missing"]
    path, what = tool_args_problem(schema, {"s": "x"}, 1000) or ("", "")
    assert (path, "does not resolve" in what) == ("args", True)
