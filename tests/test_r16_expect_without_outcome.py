"""r16: an ``expect`` that names neither ``ok`` nor ``error`` passes a step that failed.

FORMAT.md: ``expect`` is "what must happen (absent: the step must succeed)";
``{"result": ...}`` passes when "the step's value matches" — a refused call has
no value. But check_expectation (engine/app/replay.py) only checks for an error
when ``expect`` is None: ``{}`` checks nothing at all, and ``{"result": null}``
(the natural way to say "returns nothing", e.g. clipboard.copyText's "—") matches
the ``None`` a refused call leaves in ``got["result"]`` (``_outcome_of`` sets
``got["result"] = decision.value`` for denials too). So these steps, refused with
PERMISSION_DENIED, pass — while the same step with no ``expect`` fails.
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
    """The baseline: absent expect, the refusal is a failure."""
    passed, got = await _play(tmp_path, REFUSED)
    assert got["error"] == "PERMISSION_DENIED"
    assert not passed


@pytest.mark.parametrize("expect", [{"result": None}, {}], ids=["result-null", "empty"])
async def test_expectation_without_ok_or_error_still_needs_success(
        tmp_path: Path, expect: dict) -> None:
    passed, got = await _play(tmp_path, dict(REFUSED, expect=expect))
    assert got["error"] == "PERMISSION_DENIED"
    assert not passed, f"expect {expect} passed a step refused with {got['error']}"
