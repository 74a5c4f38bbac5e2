"""A hold whose timeout passed while no engine ran is expired as soon as an engine opens
(SPEC §7: holds survive a restart as pending or, when their timeout passed
meanwhile, as expired — never approved), on SQLite and on PostgreSQL.

What a person reads right after opening (`Engine.prompt`, `Engine.prompts`, and
through them ``arrowgate hold list`` and ``GET /v1/holds``) must not offer a hold
that can no longer be approved; its ``expired`` row is logged at its deadline.

Found in round 24: a reopened engine listed such a hold as ``held``, whole text
and all, until its first operation or timer tick expired it.
"""

from __future__ import annotations

from pathlib import Path

from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install, open_store


async def test_a_hold_timed_out_while_down_is_expired_once_opened(store: str,
                                                                 tmp_path: Path) -> None:
    """Right after opening, before any operation: expired, not listed, logged at its deadline."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code",
                           "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    pid = (await engine.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})).prompt
    deadline = engine.prompt(pid).deadline
    engine.close()

    clock.t += 301  # the hold timeout (300 s) passes while nothing runs
    again = open_store(store, clock=clock)
    try:
        assert again.prompt(pid).state == "expired"
        assert again.prompts(state="held") == []
        assert again.outcome(pid).code == "HOLD_EXPIRED"
        rows = again.log_rows(arrow="e1")
        assert [r["outcome"] for r in rows] == ["held", "expired"]
        assert rows[-1]["t"] == deadline and rows[-1]["approver"] is None
        assert again.verify_log().ok
    finally:
        again.close()


async def test_a_hold_within_its_timeout_opens_held(store: str, tmp_path: Path) -> None:
    """A restart before the timeout keeps the hold pending, and nothing is logged for it."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code",
                           "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    pid = (await engine.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})).prompt
    engine.close()

    clock.t += 299
    again = open_store(store, clock=clock)
    try:
        assert again.prompt(pid).state == "held"
        assert [p.id for p in again.prompts(state="held")] == [pid]
        assert [r["outcome"] for r in again.log_rows(arrow="e1")] == ["held"]
    finally:
        again.close()
