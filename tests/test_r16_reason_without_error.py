"""r16: an expectation naming ``reason`` or ``permission`` without ``error`` checks nothing.

FORMAT.md: ``{"error": "CODE", "reason": "...", "permission": "..."}`` — reason and
permission "are checked when given". The replay only looks at them inside its
``if "error" in expect`` branch (engine/app/replay.py check_expectation), so a case
that writes ``{"reason": "not-connected"}`` passes whatever the step did: here the
call is refused with reason ``not-declared`` / permission ``fs.read``, and the case
that says otherwise passes.
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
