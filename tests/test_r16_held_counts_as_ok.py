"""r16: a held prompt passes as "the step succeeded".

FORMAT.md: ``{"ok": true}`` passes when "the step succeeded (a prompt was
accepted: queued or delivered)"; ``expect`` absent means "the step must
succeed"; ``{"held": true}`` is its own expectation ("the call waits for a
person"). For a ``call`` the replay gets this right with ``{"ok": true}`` (a held
call fails it), but:

* an ``emit`` whose delivery is held gets ``got["ok"] = True`` *and*
  ``got["held"] = True`` (engine/app/replay.py, the ``emit`` branch of ``_do``:
  ``got["ok"] = True`` whenever no delivery failed), so ``{"ok": true}`` passes
  while the prompt waits for a person;
* a step with no ``expect`` only checks that ``"error" not in got``
  (``check_expectation``, first line), so a ``call`` that is held passes where
  ``{"ok": true}`` on the very same step fails.

A case written to prove "this prompt goes straight through" passes against an
engine that holds it.
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
    result = await _play(tmp_path, {"do": "emit", "card": "c1", "port": "out", "data": "go",
                                    "expect": {"ok": True}})
    assert result.steps[0].got["deliveries"]["pp"].get("held") is True
    assert not result.passed, "an emit whose only prompt is held passed {\"ok\": true}"


async def test_held_call_with_ok_true_fails(tmp_path: Path) -> None:
    """Baseline: for a call, {"ok": true} already refuses a held prompt."""
    result = await _play(tmp_path, {"do": "call", "card": "c1", "call": "agents.prompt",
                                    "target": "a1", "args": {"text": "go"},
                                    "expect": {"ok": True}})
    assert result.steps[0].got.get("held") is True
    assert not result.passed


async def test_held_call_with_no_expect_fails(tmp_path: Path) -> None:
    result = await _play(tmp_path, {"do": "call", "card": "c1", "call": "agents.prompt",
                                    "target": "a1", "args": {"text": "go"}})
    assert result.steps[0].got.get("held") is True
    assert not result.passed, "a held call passed a step that must succeed"
