"""``hold.approve`` / ``hold.reject`` always reach the engine, held prompt or not, and the
step reports what the engine answers: its principal check first (SPEC §4.5: only the
operator answers a hold, APPROVAL_REFUSED ``from-agent``, in the consent history), then
NOT_FOUND with the prompt's state (``rejected``, ``queued``, ...) as its reason.

(Found by a helper: with no held prompt left the replay answered NOT_FOUND ``not-held``
itself: an agent approving an answered hold "passed" as NOT_FOUND, and its refused attempt
was missing from the history.)
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
    """An agent answering a hold already answered is refused from-agent, and recorded."""
    result = await _play(tmp_path, [
        HELD,
        {"do": "hold.reject", "hold": "p1"},
        {"do": "hold.approve", "hold": "p1", "by": "agent:a1",
         "expect": {"error": "APPROVAL_REFUSED", "reason": "from-agent"}},
        {"do": "history"},
    ])
    assert result.steps[1].passed
    assert [(e["principal"], e["action"], e["accepted"])
            for e in result.steps[3].got["result"]][-1] == ("agent:a1", "hold.approve", False)
    step = result.steps[2]
    assert step.passed, f"the engine refuses an agent first (SPEC §4.5); the replay said " \
                        f"{step.got.get('error')}/{step.got.get('reason')}"


async def test_not_held_reason_is_the_prompts_state(tmp_path: Path) -> None:
    """NOT_FOUND names the prompt's state, as the engine gives it."""
    result = await _play(tmp_path, [
        HELD,
        {"do": "hold.reject", "hold": "p1"},
        {"do": "hold.approve", "hold": "p1", "expect": {"error": "NOT_FOUND",
                                                       "reason": "rejected"}},
    ])
    assert result.steps[2].passed, result.steps[2].problem


async def test_the_engine_itself_answers_so(tmp_path: Path) -> None:
    """The control: what the engine itself answers to the same requests."""
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


async def test_rejecting_a_prompt_never_held_names_its_state(tmp_path: Path) -> None:
    """A prompt that went straight through: hold.reject is NOT_FOUND with its state."""
    case = dict(CASE, nodes=[CASE["nodes"][0], dict(CASE["nodes"][1], dangerous=False)])
    path = tmp_path / "case.json"
    path.write_text(json.dumps(dict(case, steps=[
        dict(HELD, expect={"ok": True, "state": "delivered"}),
        {"do": "hold.reject", "hold": "p1", "expect": {"error": "NOT_FOUND",
                                                      "reason": "delivered"}},
    ])))
    result = await run_case(path)
    assert result.passed, [s.problem for s in result.steps]
