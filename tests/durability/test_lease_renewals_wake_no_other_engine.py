"""SPEC §10: renewing a terminal claim's lease is no change of the canvas to other engines.

Rule: the driving engine renews its claims' leases every few seconds; no other
engine on the store takes a renewal for a change — its live views
(`Engine.changes`) are not woken, it catches up with nothing — while a change
of the canvas, or a row of the log, made meanwhile still wakes them.

(Found in round 23: on SQLite a renewal is a commit, so ``pragma data_version``
moved and every other engine on the file caught up and woke its live views
every 5 seconds for nothing; PostgreSQL's renewal records no change.)
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.services import claims
from tests.durability.targets import Target
from tests.durability.wiring import Recording, wire_terminal


async def _until(what: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not what() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return bool(what())


async def test_lease_renewals_wake_no_other_engine(
        make_engine: Any, target: Target, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claims, "RENEW_EVERY_S", 0.05)
    app: Engine = make_engine()
    await wire_terminal(app, tmp_path)
    other: Engine = make_engine()
    await app.attach_driver("t1", Recording("t1"))
    other.catch_up()
    woke: list[int] = []

    async def watch() -> None:
        async for revision in other.changes(0.01):
            woke.append(revision)

    watching = asyncio.create_task(watch())
    try:
        def renewed() -> float:
            return float(target.query("select expires from terminal_drivers"
                                      " where node = 't1'")[0][0])

        for _ in range(4):
            before = renewed()
            assert await _until(lambda: renewed() > before), "the lease is not renewed"
        await asyncio.sleep(0.05)
        assert woke == [], f"woken {len(woke)} times by lease renewals alone"

        await app.add_node({"id": "n1", "type": "note"}, workspace="w1")
        assert await _until(lambda: len(woke) > 0), "a change of the canvas woke nothing"
        assert other.state.canvas.has_node("n1")
        if not target.postgres:
            # On SQLite a row of the log alone wakes them too (a live log view shows
            # it): telling a renewal apart must not hide it. (PostgreSQL's views
            # follow its change feed, which has no log rows.)
            seen = len(woke)
            refused = await app.call("c1", "terminals.run", "n1", {"command": "ls"})
            assert not refused.allowed
            assert await _until(lambda: len(woke) > seen), "a row of the log woke nothing"
    finally:
        watching.cancel()
