"""A held prompt is not success: ``{"ok": true}`` and a step with no ``expect`` fail
when the prompt waits for a person, for a ``call`` and for an ``emit`` alike; a hold is
expected by ``{"held": true}`` (FORMAT.md: ``ok`` is "a prompt was accepted: queued or
delivered").

(Found by a helper: an emit with a held delivery was given ``ok`` and ``held`` both, and
a step with no ``expect`` only checked for an error: a case proving "this prompt goes
straight through" passed against an engine that held it.)
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.app.replay import run_case

MANIFEST = {"name": "acme.p", "version": "1.0.0", "permissions": {"agents.prompt": {}},
            "ports": {"inputs": [], "outputs": ["out"]}}
CASE = {
    "name": "r16 held is not ok",
    "packages": {"acme.p": {"manifest": MANIFEST, "files": {"index.js": "//"},
                            "grant": "required"}},
    "nodes": [{"id": "c1", "type": "card", "package": "acme.p"},
              {"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code",
               "dangerous": True}],
    "arrows": [{"id": "e1", "from": "c1", "to": "a1"},
               {"id": "pp", "from": "c1", "from_port": "out", "to": "a1",
                "to_port": "prompt"}],
}


async def _play(tmp_path: Path, step: dict):
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(CASE, steps=[step])))
    result = await run_case(path)
    assert not result.invalid, result.error
    return result


async def test_held_emit_does_not_pass_ok_true(tmp_path: Path) -> None:
    """An emit whose prompt is held fails {"ok": true}."""
    result = await _play(tmp_path, {"do": "emit", "card": "c1", "port": "out", "data": "go",
                                    "expect": {"ok": True}})
    assert result.steps[0].got["deliveries"]["pp"].get("held") is True
    assert not result.passed, "an emit whose only prompt is held passed {\"ok\": true}"


async def test_held_call_with_ok_true_fails(tmp_path: Path) -> None:
    """A call whose prompt is held fails {"ok": true}."""
    result = await _play(tmp_path, {"do": "call", "card": "c1", "call": "agents.prompt",
                                    "target": "a1", "args": {"text": "go"},
                                    "expect": {"ok": True}})
    assert result.steps[0].got.get("held") is True
    assert not result.passed


async def test_held_call_with_no_expect_fails(tmp_path: Path) -> None:
    """A call whose prompt is held fails a step with no expect (it must succeed)."""
    result = await _play(tmp_path, {"do": "call", "card": "c1", "call": "agents.prompt",
                                    "target": "a1", "args": {"text": "go"}})
    assert result.steps[0].got.get("held") is True
    assert not result.passed, "a held call passed a step that must succeed"


async def test_held_emit_with_no_expect_fails(tmp_path: Path) -> None:
    """An emit whose prompt is held fails a step with no expect."""
    result = await _play(tmp_path, {"do": "emit", "card": "c1", "port": "out", "data": "go"})
    assert not result.passed


async def test_a_hold_expected_passes(tmp_path: Path) -> None:
    """The control: {"held": true}, on the step or on its port arrow, passes a hold."""
    call = {"do": "call", "card": "c1", "call": "agents.prompt", "target": "a1",
            "args": {"text": "go"}, "expect": {"held": True}}
    assert (await _play(tmp_path, call)).passed
    emit = {"do": "emit", "card": "c1", "port": "out", "data": "go",
            "expect": {"deliveries": {"pp": {"held": True}}}}
    assert (await _play(tmp_path, emit)).passed
