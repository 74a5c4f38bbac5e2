"""r16: ``hold.approve`` / ``hold.reject`` on a prompt no longer held never reach the engine.

The replay filters the step's prompts down to those in state ``held`` and, when
none is left, answers itself ``NOT_FOUND`` / reason ``not-held``
(engine/app/replay.py, the ``hold.approve``/``hold.reject`` branch of ``_do``).
The engine (engine/services/prompts.py ``_answer_hold``) checks the principal
first — SPEC §4.5: only ``operator`` approves a hold, anything else is
``APPROVAL_REFUSED`` ``from-agent`` and the refused attempt goes into the consent
history (SPEC §8) — and then answers ``NOT_FOUND`` with the prompt's state as the
reason (``rejected``, ``expired``, ...). So the replay's verdict is one the engine
never gives: an agent approving an already-answered hold "passes" as NOT_FOUND,
a case expecting the engine's APPROVAL_REFUSED fails, and the refused attempt is
missing from the history a later step reads.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.app.replay import run_case
from engine.core.errors import ApprovalRefused, NotFound
from engine.engine import Engine

CASE = {
    "name": "r16 hold steps go to the engine",
    "packages": {"acme.p": {"manifest": {"name": "acme.p", "version": "1.0.0",
                                         "permissions": {"agents.prompt": {}}},
                            "files": {"index.js": "//"}, "grant": "required"}},
    "nodes": [{"id": "c1", "type": "card", "package": "acme.p"},
              {"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code",
               "dangerous": True}],
    "arrows": [{"id": "e1", "from": "c1", "to": "a1"}],
}
HELD = {"do": "call", "card": "c1", "call": "agents.prompt", "target": "a1",
        "args": {"text": "go"}, "id": "p1", "expect": {"held": True}}


async def _play(tmp_path: Path, steps: list[dict]):
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(CASE, steps=steps)))
    result = await run_case(path)
    assert not result.invalid, result.error
    return result


async def test_agent_approving_an_answered_hold_is_refused_as_from_agent(tmp_path: Path) -> None:
    result = await _play(tmp_path, [
        HELD,
        {"do": "hold.reject", "hold": "p1"},
        {"do": "hold.approve", "hold": "p1", "by": "agent:a1",
         "expect": {"error": "APPROVAL_REFUSED", "reason": "from-agent"}},
    ])
    assert result.steps[1].passed
    step = result.steps[2]
    assert step.passed, f"the engine refuses an agent first (SPEC §4.5); the replay said " \
                        f"{step.got.get('error')}/{step.got.get('reason')}"


async def test_not_held_reason_is_the_engines(tmp_path: Path) -> None:
    """The engine's NOT_FOUND names the prompt's state; the replay invents 'not-held'."""
    result = await _play(tmp_path, [
        HELD,
        {"do": "hold.reject", "hold": "p1"},
        {"do": "hold.approve", "hold": "p1", "expect": {"error": "NOT_FOUND",
                                                       "reason": "rejected"}},
    ])
    assert result.steps[2].passed, result.steps[2].problem


async def test_the_engine_itself_answers_so(tmp_path: Path) -> None:
    """What the engine does with the same request (the control for the two above)."""
    from engine.app.replay import VirtualClock

    ws = tmp_path / "ws"
    ws.mkdir()
    engine = Engine.open(tmp_path / "db.sqlite", clock=VirtualClock())
    try:
        await engine.create_workspace("w1", ws)
        manifest = CASE["packages"]["acme.p"]["manifest"]
        from engine.core.manifest import file_digests
        await engine.offer("acme.p", manifest, file_digests(
            {"index.js": "//", "manifest.json": json.dumps(manifest, sort_keys=True)}))
        await engine.install("acme.p", grant="required")
        for node in CASE["nodes"]:
            await engine.add_node(node, workspace="w1")
        await engine.add_arrow(CASE["arrows"][0])
        decision = await engine.call("c1", "agents.prompt", "a1", {"text": "go"})
        assert decision.outcome == "held"
        await engine.reject_hold(decision.prompt)
        shown = engine.prompt(decision.prompt)
        try:
            await engine.approve_hold(decision.prompt, text_sha256=shown.text_sha256,
                                      by="agent:a1")
        except ApprovalRefused as exc:
            assert exc.reason == "from-agent"
        else:
            raise AssertionError("the engine accepted an agent's approval")
        try:
            await engine.approve_hold(decision.prompt, text_sha256=shown.text_sha256)
        except NotFound as exc:
            assert exc.reason == "rejected"
        else:
            raise AssertionError("the engine approved a rejected hold")
    finally:
        engine.close()
