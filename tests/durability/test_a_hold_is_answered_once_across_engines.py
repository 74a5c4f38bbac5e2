"""A held prompt is answered once, whichever engines on the store answer it and whatever
they answer it against, on both stores (SPEC §7, §10: every rule holds across all engines
on one database).

Round 25 attacked these and they held; kept as guards: each engine's operation catches
up with the others' commits before it judges, and a write that finds another's commit
since is made again (`engine.store.transactions.Stale`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import Engine, NotFound
from tests.conftest import manifest, offer_install


async def _held(engine: Engine, tmp_path: Path) -> str:
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "status": "working",
                           "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "deploy\u0301\n"})
    assert held.outcome == "held" and held.prompt is not None
    return held.prompt


async def test_two_engines_approving_at_once_approve_once(open_engine: Any,
                                                         tmp_path: Path) -> None:
    """One approval goes through; the other is told the prompt is no longer held."""
    one = open_engine()
    pid = await _held(one, tmp_path)
    other = open_engine()
    digest = one.prompt(pid).text_sha256
    assert other.prompt(pid).state == "held"
    answers = await asyncio.gather(one.approve_hold(pid, text_sha256=digest),
                                   other.approve_hold(pid, text_sha256=digest),
                                   return_exceptions=True)
    assert sorted(type(a).__name__ for a in answers) == ["Decision", "NotFound"], answers
    assert [r["outcome"] for r in one.log_rows(arrow="e1")] == ["held", "approved"]
    assert [h["action"] for h in one.history.entries()].count("hold.approve") == 1


async def test_an_approval_after_the_arrow_went_elsewhere_lets_nothing_through(
        open_engine: Any, tmp_path: Path) -> None:
    """An engine that last saw the prompt held approves it after another removed its
    arrow: not held (cancelled), and nothing approved."""
    one = open_engine()
    pid = await _held(one, tmp_path)
    other = open_engine()
    digest = one.prompt(pid).text_sha256
    assert other.prompt(pid).state == "held"
    await one.remove_arrow("e1")
    try:
        await other.approve_hold(pid, text_sha256=digest)
    except NotFound as exc:
        assert exc.reason == "cancelled"
    else:
        raise AssertionError("approved a prompt whose arrow was removed")
    assert [r["outcome"] for r in one.log_rows(arrow="e1")] == ["held", "cancelled"]


async def test_a_hold_survives_a_restart_and_is_approved_by_its_digest(
        open_engine: Any, tmp_path: Path) -> None:
    """Reopened, the hold is still held (never approved), and the digest of the very
    text (combining mark and newline included) approves it."""
    one = open_engine()
    pid = await _held(one, tmp_path)
    digest = one.prompt(pid).text_sha256
    one.close()
    again = open_engine()
    assert [p.id for p in again.prompts(state="held")] == [pid]
    assert again.prompt(pid).text == "deploy\u0301\n"
    decided = await again.approve_hold(pid, text_sha256=digest)
    assert decided.outcome == "queued"
