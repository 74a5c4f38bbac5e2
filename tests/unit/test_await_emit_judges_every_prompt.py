"""``await`` on an ``emit`` judges every prompt the emit made, as the emit itself is
judged: one refused (cancelled, rejected, expired) refuses the step, one still held fails
it, all queued or delivered is ``ok``; each port arrow's outcome and state is in
``deliveries`` (an emit has no one state).

(Found by a helper: ``await`` read only the emit's first prompt: it passed ``{"ok": true}``
while the second was still held, and after it expired.)
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
    """A prompt of the emit still held fails the await, though another was delivered."""
    result = await _play(tmp_path, [EMIT, {"do": "await", "step": "m", "t": 1,
                                           "expect": {"ok": True}}])
    assert result.steps[0].passed, result.steps[0].problem
    assert not result.steps[1].passed, "await passed while p2's prompt is still held"


async def test_await_fails_when_a_prompt_of_the_emit_expired(tmp_path: Path) -> None:
    """A prompt of the emit that expired refuses the await with HOLD_EXPIRED."""
    result = await _play(tmp_path, [
        EMIT,
        {"do": "await", "step": "m", "t": 400, "expect": {"ok": True}},
        {"do": "log", "arrow": "p2", "expect": {"outcomes": ["held", "expired"]}},
    ])
    assert result.steps[0].passed and result.steps[2].passed, \
        [s.problem for s in result.steps]
    assert not result.steps[1].passed, "await passed although p2's prompt expired"


async def test_await_gives_each_arrows_outcome(tmp_path: Path) -> None:
    """The await's error is the expired prompt's; each arrow's outcome is in deliveries."""
    result = await _play(tmp_path, [
        EMIT,
        {"do": "await", "step": "m", "t": 400, "expect": {
            "error": "HOLD_EXPIRED",
            "deliveries": {"p1": {"ok": True, "state": "delivered"},
                           "p2": {"error": "HOLD_EXPIRED"}}}},
        {"do": "await", "step": "m", "expect": {"state": "delivered"}},
    ])
    assert result.steps[1].passed, result.steps[1].problem
    assert not result.steps[2].passed
    assert "state per port arrow" in result.steps[2].problem
