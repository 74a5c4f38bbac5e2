"""An ``emit`` refused at step level carries its refused delivery's whole refusal:
``{"error": "RATE_LIMITED", "retry_after": x}`` on the emit checks the delivery's
``retry_after``, as it does on the delivery itself.

(Found by a helper: the emit's step-level error copied only error, reason and
permission, so ``retry_after`` there always failed with "got none".)
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.app.replay import run_case

MANIFEST = {"name": "acme.p", "version": "1.0.0", "permissions": {"agents.prompt": {}},
            "ports": {"inputs": [], "outputs": ["out"]}}
CASE = {
    "name": "r16 emit retry_after",
    "packages": {"acme.p": {"manifest": MANIFEST, "files": {"index.js": "//"},
                            "grant": "required"}},
    "nodes": [{"id": "c1", "type": "card", "package": "acme.p"},
              {"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code"}],
    "arrows": [{"id": "pp", "from": "c1", "from_port": "out", "to": "a1",
                "to_port": "prompt"}],
}


async def test_emit_refused_rate_limited_has_retry_after(tmp_path: Path) -> None:
    """retry_after is checked at step level on an emit, as on its delivery."""
    # Six prompts a minute per card and port (SPEC §6): the seventh, at t=10, waits
    # for the one made at t=0 to leave the window: retry_after 50.
    steps = [{"do": "emit", "card": "c1", "port": "out", "data": f"p{i}", "t": i}
             for i in range(6)]
    steps.append({"do": "emit", "card": "c1", "port": "out", "data": "p6", "t": 10,
                  "expect": {"deliveries": {"pp": {"error": "RATE_LIMITED",
                                                   "retry_after": 50}}}})
    steps.append({"do": "emit", "card": "c1", "port": "out", "data": "p7", "t": 10,
                  "expect": {"error": "RATE_LIMITED", "retry_after": 50}})
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(CASE, steps=steps)))
    result = await run_case(path)
    assert all(s.passed for s in result.steps[:7]), [s.problem for s in result.steps]
    assert result.steps[7].passed, result.steps[7].problem
