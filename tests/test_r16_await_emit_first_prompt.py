"""r16: ``await`` on an ``emit`` step judges only the emit's first prompt.

FORMAT.md ``await``: "check expect against the outcome of an earlier call: a
prompt that is queued, delivered or replied is ``ok``; one cancelled, rejected or
expired gives its error; one still held fails the step". An emit makes one prompt
per port arrow; the replay keeps them all (``step_prompts[sid]``) but ``await``
reads ``engine.outcome(prompts[0])`` only (engine/app/replay.py, the ``await``
branch of ``_do``). Here the emit's first prompt (to a1) is delivered and its
second (to a2, dangerous) is held: ``await ... {"ok": true}`` passes while the
second is still held, and again after it expired (HOLD_EXPIRED, in the log).
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.app.replay import run_case

MANIFEST = {"name": "acme.p", "version": "1.0.0", "permissions": {"agents.prompt": {}},
            "ports": {"inputs": [], "outputs": ["out"]}}
CASE = {
    "name": "r16 await every prompt of an emit",
    "settings": {"hold_timeout": 300},
    "packages": {"acme.p": {"manifest": MANIFEST, "files": {"index.js": "//"},
                            "grant": "required"}},
    "nodes": [{"id": "c1", "type": "card", "package": "acme.p"},
              {"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code"},
              {"id": "a2", "type": "agent", "name": "A2", "tool": "claude-code",
               "dangerous": True}],
    "arrows": [{"id": "p1", "from": "c1", "from_port": "out", "to": "a1", "to_port": "prompt"},
               {"id": "p2", "from": "c1", "from_port": "out", "to": "a2", "to_port": "prompt"}],
}
EMIT = {"do": "emit", "card": "c1", "port": "out", "data": "go", "id": "m",
        "expect": {"held": True, "deliveries": {"p1": {"ok": True}, "p2": {"held": True}}}}


async def _play(tmp_path: Path, steps: list[dict]):
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(CASE, steps=steps)))
    result = await run_case(path)
    assert not result.invalid, result.error
    return result


async def test_await_fails_while_a_prompt_of_the_emit_is_held(tmp_path: Path) -> None:
    result = await _play(tmp_path, [EMIT, {"do": "await", "step": "m", "t": 1,
                                           "expect": {"ok": True}}])
    assert result.steps[0].passed, result.steps[0].problem
    assert not result.steps[1].passed, "await passed while p2's prompt is still held"


async def test_await_fails_when_a_prompt_of_the_emit_expired(tmp_path: Path) -> None:
    result = await _play(tmp_path, [
        EMIT,
        {"do": "await", "step": "m", "t": 400, "expect": {"ok": True}},
        {"do": "log", "arrow": "p2", "expect": {"outcomes": ["held", "expired"]}},
    ])
    assert result.steps[0].passed and result.steps[2].passed, \
        [s.problem for s in result.steps]
    assert not result.steps[1].passed, "await passed although p2's prompt expired"
