"""An expectation's ``reason`` and ``permission`` are checked whenever given, with or
without ``error`` beside them (FORMAT.md: "checked when given").

(Found by a helper: check_expectation looked at them only inside its ``error`` branch,
so ``{"reason": "not-connected"}`` passed whatever the step did.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.replay import run_case

CASE = {
    "name": "r16 reason without error",
    "packages": {"acme.p": {"manifest": {"name": "acme.p", "version": "1.0.0",
                                         "permissions": {"clipboard.write": {}}},
                            "files": {"index.js": "//"}, "grant": "required"}},
    "nodes": [{"id": "c1", "type": "card", "package": "acme.p"}],
}


@pytest.mark.parametrize("expect", [{"reason": "not-connected"},
                                    {"permission": "agents.prompt"},
                                    {"reason": "not-connected", "permission": "agents.prompt"}])
async def test_reason_or_permission_alone_is_checked(tmp_path: Path, expect: dict) -> None:
    """A reason or permission other than the engine's fails the step, without error too."""
    # fs.readText is refused: PERMISSION_DENIED, reason not-declared, permission fs.read.
    case = dict(CASE, steps=[{"do": "call", "card": "c1", "call": "fs.readText",
                              "args": {"path": "x"}, "expect": expect}])
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    result = await run_case(path)
    step = result.steps[0]
    assert step.got["reason"] == "not-declared" and step.got["permission"] == "fs.read"
    # The reason/permission the case names is not the one the engine gave: the
    # step must fail (or the case be refused as invalid) — not pass silently.
    assert not result.passed, f"{expect} passed against {step.got['reason']}/{step.got['permission']}"


async def test_the_engines_own_reason_and_permission_pass(tmp_path: Path) -> None:
    """The control: the refusal the engine gives, reason and permission included, passes."""
    case = dict(CASE, steps=[{"do": "call", "card": "c1", "call": "fs.readText",
                              "args": {"path": "x"},
                              "expect": {"error": "PERMISSION_DENIED", "reason": "not-declared",
                                         "permission": "fs.read"}}])
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    assert (await run_case(path)).passed
