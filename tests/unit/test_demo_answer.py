"""The demo shows what it promises: yolo's answer once a person approves; and wait()
returns the resolution the log shows (issue 13)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main
from engine.app.demo import play_demo
from tests.conftest import polls

ANSWER = "done: Delete the build folder and redeploy."


async def test_approved_in_the_demo_the_answer_is_there_for_the_tui(tmp_path: Path) -> None:
    """Approved while the demo's drivers run, yolo answers; the engine has the reply."""
    engine = Engine.open(tmp_path / "app.db")
    try:
        result = await play_demo(engine, tmp_path / "proj", lambda _line: None)
        assert result.held_prompt is not None
        pid = result.held_prompt
        # WHEN a person approves the text they were shown (as the TUI does)
        await engine.approve_hold(pid, text_sha256=engine.prompt(pid).text_sha256)
        for _ in polls():
            if engine.prompt(pid).state == "replied":
                break
            await engine.world.settle()
            await asyncio.sleep(0.01)
        # THEN the answer is on the agent, for any view of the engine, and readable on the arrow
        assert engine.state.canvas.node("yolo").data["last_reply"] == ANSWER
        reply = await engine.call("standup", "agents.lastReply", "yolo")
        assert reply.value == ANSWER
    finally:
        await engine.world.aclose()
        engine.close()


def test_approved_in_another_process_the_next_demo_tells_the_answer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Approved in a TUI with no driver behind yolo, the demo run again shows yolo's answer."""
    db, folder = tmp_path / "app.db", str(tmp_path / "proj")
    assert main(["demo", "--no-tui", "--db", str(db), "--folder", folder]) == 0
    # GIVEN a person approves the held prompt in another engine (the TUI's), without drivers
    other = Engine.open(db)
    held = other.prompts(state="held")
    assert [p.agent for p in held] == ["yolo"]
    asyncio.run(other.approve_hold(held[0].id, text_sha256=held[0].text_sha256))
    assert other.prompt(held[0].id).state == "delivered"
    other.close()
    capsys.readouterr()
    # WHEN the demo runs again
    assert main(["demo", "--no-tui", "--db", str(db), "--folder", folder]) == 0
    out = capsys.readouterr().out
    # THEN its narrative tells what became of the prompt, and yolo's answer
    assert f"Last run: the held prompt {held[0].id} to yolo" in out
    assert "was approved by operator" in out and f"yolo answered: {ANSWER}" in out
    # AND the answer is a state the engine keeps: the prompt was replied to
    check = Engine.open(db)
    try:
        assert check.prompt(held[0].id).state == "replied"
    finally:
        check.close()


def test_unanswered_hold_is_told_on_the_next_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A hold nobody answered is named, and the rebuild cancels it."""
    db, folder = tmp_path / "app.db", str(tmp_path / "proj")
    assert main(["demo", "--no-tui", "--db", str(db), "--folder", folder]) == 0
    capsys.readouterr()
    assert main(["demo", "--no-tui", "--db", str(db), "--folder", folder]) == 0
    assert "was not answered; rebuilding the canvas cancels it" in capsys.readouterr().out


async def _held(world: Engine) -> str:
    await world.set_node("a1", {"dangerous": True})
    d = await world.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})
    assert d.outcome == "held"
    return str(d.prompt)


def _logged(world: Engine, prompt: str) -> str:
    return [r["outcome"] for r in world.log_rows() if r["prompt"] == prompt][-1]


@pytest.mark.parametrize("answer", ["approve", "reject", "expire", "cancel"])
async def test_wait_returns_the_state_the_log_shows(world: Engine, clock: Any,
                                                    answer: str) -> None:
    """wait()'s resolution is the outcome of the prompt's resolution row in the log."""
    pid = await _held(world)
    waiting = asyncio.ensure_future(world.wait(pid))
    await asyncio.sleep(0)
    if answer == "approve":
        await world.approve_hold(pid, text_sha256=world.prompt(pid).text_sha256)
    elif answer == "reject":
        await world.reject_hold(pid)
    elif answer == "expire":
        clock.t += 301
    else:
        await world.remove_arrow("e1")
    decision = await asyncio.wait_for(waiting, timeout=30)
    expected = {"approve": "approved", "reject": "rejected", "expire": "expired",
                "cancel": "cancelled"}[answer]
    assert decision.value["resolution"] == expected == _logged(world, pid)
    assert decision.value["state"] == world.prompt(pid).state
