"""A held prompt approved while its agent's queue already holds 20 undelivered prompts
besides it (SPEC §6 "Prompt queue", §7) — a store an arrowgate before round 27 filled,
when held prompts were not counted among the 20.

The queue never holds more than 20: the approval does not queue the prompt past them.
It is cancelled with ``QUEUE_FULL`` (the error a new prompt gets at check 11), its
resolution logged with the person who approved, and every interface says so — the
Python API's Decision, the CLI's exit 1 and line, the service's Decision (the same
`Engine.approve_hold`), the TUI's warning (tests/tui) — never that it was approved
through. (Round 25: the decision stood in the README, but the messages said only that
the agent "has 20 undelivered prompts", and the TUI told the person "approved".)
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main
from engine.app.replay import VirtualClock
from engine.core.prompts import QUEUE_LIMIT
from engine.effects.operator import OperatorCheck
from tests.conftest import manifest, offer_install


async def fill_behind_a_hold(engine: Engine, clock: VirtualClock) -> str:
    """A prompt held for working agent a1, then a1's queue filled with 20 prompts behind
    it, as an arrowgate before round 27 let it be (a held prompt was not counted among
    the 20: now it is, and keeps its place, so only such a store has a full queue
    behind a hold); the held prompt's id."""
    await engine.set_node("a1", {"status": "working", "dangerous": True})
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "deploy now"})
    assert held.outcome == "held" and held.prompt is not None
    await engine.set_node("a1", {"dangerous": False})
    with pytest.MonkeyPatch.context() as older:
        older.setattr("engine.core.checks.QUEUE_LIMIT", QUEUE_LIMIT + 1)
        for i in range(QUEUE_LIMIT):
            clock.t += 11  # under 6 a minute, and within the hold's 300 s
            assert (await engine.call("c1", "agents.prompt", "a1",
                                      {"text": f"q{i}"})).outcome == "queued"
    return held.prompt


async def test_the_approval_cancels_it_and_the_queue_stays_at_twenty(
        world: Engine, clock: VirtualClock) -> None:
    """approve_hold answers QUEUE_FULL, the prompt cancelled (not queued), and says why."""
    # GIVEN a held prompt behind a full queue
    pid = await fill_behind_a_hold(world, clock)
    # WHEN a person approves it
    d = await world.approve_hold(pid, text_sha256=world.prompt(pid).text_sha256)
    # THEN it is cancelled with QUEUE_FULL, and the queue still holds 20
    assert (d.outcome, d.code, d.value["state"]) == ("denied", "QUEUE_FULL", "cancelled")
    assert world.state.undelivered("a1") == QUEUE_LIMIT
    assert f"prompt {pid} is cancelled" in d.message and "send it again" in d.message
    row = world.log_rows(arrow="e1")[-1]
    assert (row["outcome"], row["code"], row["approver"]) == ("cancelled", "QUEUE_FULL",
                                                             "operator")
    # AND the card waiting on it is told the same
    waited = await world.wait(pid)
    assert (waited.code, waited.value["resolution"]) == ("QUEUE_FULL", "cancelled")


def test_the_cli_says_it_was_cancelled_and_exits_1(
        make_engine, clock: VirtualClock, db_path: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`hold approve` of such a prompt exits 1 and says it was cancelled, not approved through."""
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))

    async def build() -> tuple[str, str]:
        engine = make_engine()
        (tmp_path / "ws").mkdir()
        await engine.create_workspace("w1", tmp_path / "ws")
        await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent", "name": "A1"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
        pid = await fill_behind_a_hold(engine, clock)
        digest = engine.prompt(pid).text_sha256
        engine.close()
        return pid, digest

    # Made now: the CLI's engine reads the real clock, and the store's newest time
    # (220 s on) is still within the hold's 300 s.
    clock.t = time.time()
    pid, digest = asyncio.run(build())
    code = main(["hold", "approve", pid, "--sha256", digest, "--db", str(db_path)])
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    assert f"prompt {pid}: cancelled at its approval — QUEUE_FULL" in out + err
    code = main(["hold", "list", "--db", str(db_path), "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out) == []
