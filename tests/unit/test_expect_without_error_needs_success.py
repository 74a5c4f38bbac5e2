"""A step is expected to succeed unless its expectation names an ``error`` (or says
``{"ok": false}``, or names each refused port arrow of an emit in ``deliveries``): a
refused step fails ``{}``, ``{"result": ...}``, ``{"held": false}`` and ``deliveries``
that leave its refusal out, as it fails with no ``expect``; a refusal has no value, so
``result`` never matches it.

(Found by a helper: check_expectation looked for an error only when ``expect`` was
absent, and a refused call's ``result`` was None: ``{}`` and ``{"result": null}`` passed
a call refused with PERMISSION_DENIED.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.replay import run_case

CASE = {
    "name": "r16 expect without outcome",
    "packages": {"acme.p": {"manifest": {"name": "acme.p", "version": "1.0.0",
                                         "permissions": {"usage.read": {}}},
                            "files": {"index.js": "//"}, "grant": "required"}},
    "nodes": [{"id": "c1", "type": "card", "package": "acme.p"}],
}


async def _play(tmp_path: Path, step: dict) -> tuple[bool, dict]:
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(CASE, steps=[step])))
    result = await run_case(path)
    assert not result.invalid, result.error
    return result.passed, result.steps[0].got


# clipboard.write is not declared: the call is refused.
REFUSED = {"do": "call", "card": "c1", "call": "clipboard.copyText", "args": {"text": "hi"}}


async def test_no_expect_fails_the_refused_step(tmp_path: Path) -> None:
    """The control: absent expect, the refusal is a failure."""
    passed, got = await _play(tmp_path, REFUSED)
    assert got["error"] == "PERMISSION_DENIED"
    assert not passed


@pytest.mark.parametrize("expect", [{"result": None}, {}, {"held": False},
                                    {"deliveries": {}}, {"ok": True}],
                         ids=["result-null", "empty", "held-false", "deliveries", "ok"])
async def test_expectation_without_error_still_needs_success(
        tmp_path: Path, expect: dict) -> None:
    """Without error in it, an expectation fails a refused step."""
    passed, got = await _play(tmp_path, dict(REFUSED, expect=expect))
    assert got["error"] == "PERMISSION_DENIED"
    assert not passed, f"expect {expect} passed a step refused with {got['error']}"


async def test_a_refusal_has_no_value_even_when_expected(tmp_path: Path) -> None:
    """``result`` beside the right ``error`` still fails: a refused step has no value."""
    passed, _got = await _play(tmp_path, dict(REFUSED, expect={
        "error": "PERMISSION_DENIED", "result": None}))
    assert not passed


EMITTER = {"name": "acme.e", "version": "1.0.0", "permissions": {},
           "ports": {"inputs": [], "outputs": ["out"]}}
EMIT_CASE = dict(
    CASE, packages={"acme.e": {"manifest": EMITTER, "files": {"index.js": "//"},
                               "grant": "required"}},
    nodes=[{"id": "c1", "type": "card", "package": "acme.e"},
           {"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code"},
           {"id": "a2", "type": "agent", "name": "A2", "tool": "claude-code"}],
    arrows=[{"id": "p1", "from": "c1", "from_port": "out", "to": "a1", "to_port": "prompt"},
            {"id": "p2", "from": "c1", "from_port": "out", "to": "a2", "to_port": "prompt"}])


@pytest.mark.parametrize("expect, passes", [
    ({"deliveries": {}}, False),
    ({"deliveries": {"p1": {"error": "PERMISSION_DENIED"}}}, False),
    ({"deliveries": {"p1": {"error": "PERMISSION_DENIED"},
                     "p2": {"error": "PERMISSION_DENIED"}}}, True),
    ({"error": "PERMISSION_DENIED"}, True)])
async def test_an_emit_refusal_is_expected_arrow_by_arrow(
        tmp_path: Path, expect: dict, passes: bool) -> None:
    """An emit's refused deliveries pass only when each refused arrow is expected so."""
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(EMIT_CASE, steps=[
        {"do": "emit", "card": "c1", "port": "out", "data": "go", "expect": expect}])))
    result = await run_case(path)
    assert not result.invalid, result.error
    got = result.steps[0].got
    assert {a: d.get("error") for a, d in got["deliveries"].items()} == {
        "p1": "PERMISSION_DENIED", "p2": "PERMISSION_DENIED"}
    assert result.passed is passes, result.steps[0].problem
