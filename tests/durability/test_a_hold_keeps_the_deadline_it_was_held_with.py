"""A held prompt expires ``hold_timeout`` after it was held, the timeout as it was then
(SPEC §7: a hold not answered within the hold timeout expires — silence is never
consent), on SQLite and on PostgreSQL, across a restart.

The spec does not say what a change of the workspace's ``hold_timeout`` does to a hold
already made; arrowgate keeps the deadline the hold was made with, as a tool call keeps
its ``tool_timeout`` (README, "Decisions where the spec is silent"): the deadline the
person was shown stays true, a longer timeout never lengthens a hold nobody answered,
and a shorter one never ends a hold the person is reading.
"""

from __future__ import annotations

from pathlib import Path

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install, open_store


async def _held(engine: Engine, folder: Path) -> str:
    """Card c1 wired to the dangerous agent a1 on w1 (hold_timeout 300); one prompt held."""
    folder.mkdir()
    await engine.create_workspace("w1", folder, settings={"hold_timeout": 300})
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.prompter"},
                          workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})
    assert held.outcome == "held" and held.prompt is not None, held
    return held.prompt


async def test_a_shorter_timeout_set_later_leaves_the_hold_its_time(store: str,
                                                                    tmp_path: Path) -> None:
    """hold_timeout lowered to 10 s after the hold: it is still held 20 s on, across a
    restart, shown with its first deadline, and expires at it."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        # GIVEN a prompt held at t=1000 under a 300 s timeout
        pid = await _held(engine, tmp_path / "ws")
        deadline = engine.prompt(pid).deadline
        assert deadline == 1300.0
        # WHEN the timeout is lowered to 10 s and 20 s pass, the engine opened again
        await engine.set_settings("w1", {"hold_timeout": 10})
        clock.t += 20
        await engine.expire_due()
    finally:
        engine.close()
    again = open_store(store, clock=clock)
    try:
        # THEN the hold is still held, with the deadline it was made with
        await again.expire_due()
        assert again.prompt(pid).state == "held"
        assert again.prompt(pid).deadline == deadline
        assert again.hold_ends(pid) == deadline
        # AND it expires at that deadline, not before
        clock.t = deadline - 1
        await again.expire_due()
        assert again.prompt(pid).state == "held"
        clock.t = deadline
        await again.expire_due()
        assert again.outcome(pid).code == "HOLD_EXPIRED"
        assert [r["outcome"] for r in again.log_rows(arrow="e1")] == ["held", "expired"]
        assert again.verify_log().ok
    finally:
        again.close()


async def test_a_longer_timeout_set_later_never_lengthens_the_hold(store: str,
                                                                   tmp_path: Path) -> None:
    """hold_timeout raised to an hour after the hold: it still expires 300 s after it was
    held, and a prompt held after the change waits the hour."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        # GIVEN a prompt held at t=1000 under a 300 s timeout
        first = await _held(engine, tmp_path / "ws")
        # WHEN the timeout is raised to an hour, and a second prompt is held then
        await engine.set_settings("w1", {"hold_timeout": 3600})
        second = (await engine.call("c1", "agents.prompt", "a1", {"text": "ls"})).prompt
        assert second is not None
        # THEN the first expires at 1300, as it was made to
        clock.t = 1300.0
        await engine.expire_due()
        assert engine.outcome(first).code == "HOLD_EXPIRED"
        # AND the second waits the hour it was held under
        assert engine.prompt(second).state == "held"
        assert engine.prompt(second).deadline == 1000.0 + 3600
        rows = engine.log_rows(arrow="e1")
        assert [(r["outcome"], r["t"]) for r in rows] == [
            ("held", 1000.0), ("held", 1000.0), ("expired", 1300.0)]
    finally:
        engine.close()


async def test_while_time_stands_still_a_shorter_timeout_leaves_the_hold_its_time(
        store: str, tmp_path: Path) -> None:
    """With the clock stepped back (the engine's time stands still, SPEC §6), a hold still
    runs the 300 s it was held with on the clock, not a timeout lowered after it."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        # GIVEN a prompt held at t=1000 under a 300 s timeout, 100 s ago
        pid = await _held(engine, tmp_path / "ws")
        clock.t += 100
        await engine.expire_due()
        # WHEN the clock is stepped back an hour (the engine's time stands at 1100)
        # and the timeout lowered to 10 s, then the clock runs 20 s
        clock.t -= 3600
        await engine.expire_due()
        await engine.set_settings("w1", {"hold_timeout": 10})
        clock.t += 20
        await engine.expire_due()
        # THEN it is still held, 180 s of the clock left of its 300
        assert engine.prompt(pid).state == "held"
        left = engine.hold_left(pid)
        assert left is not None and abs(left - 180.0) < 1e-6, left
        # AND it expires once the clock has run them
        clock.t += 180
        await engine.expire_due()
        assert engine.outcome(pid).code == "HOLD_EXPIRED"
    finally:
        engine.close()
