"""r16: an ``emit`` refused with RATE_LIMITED cannot pass ``{"retry_after": x}``.

FORMAT.md: ``{"retry_after": x}`` — "with an error: retry_after equals x within
0.001 s". An emit's step-level error is its first failed delivery's
(engine/app/replay.py, ``emit`` branch of ``_do``: ``got.update(error=...,
reason=..., permission=...)``), but that delivery's ``retry_after`` is left out,
so a step-level ``{"error": "RATE_LIMITED", "retry_after": 50}`` fails with
"got none" although the delivery carries exactly 50 — the correct case fails.
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


async def test_emit_level_retry_after(tmp_path: Path) -> None:
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
