"""The log's timeline charts a `suppressed` row as the refusals it sums up, on SQLite and
PostgreSQL alike. (Found in round 16 by a helper: one row each, so a flood of refusals
beyond `denial_log_limit` showed as a trickle of at most the limit a minute.)"""

from __future__ import annotations

from pathlib import Path

from engine import Engine, World
from engine.app.replay import VirtualClock
from engine.store.logindex import open_log_index

from ..conftest import manifest, offer_install


async def _flood(location: str | Path, folder: Path, clock: VirtualClock) -> None:
    where = {"store": location} if isinstance(location, str) else {"path": location}
    engine = Engine.open(**where, clock=clock, world=World(net=None, fs=None))
    try:
        folder.mkdir()
        await engine.create_workspace("w1", folder, settings={"denial_log_limit": 3})
        await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "tool": "codex"},
                              workspace="w1")
        for _ in range(500):  # not connected: 3 rows, 497 suppressed
            clock.t += 0.01
            await engine.call("c1", "agents.prompt", "a1", {"text": "hi"})
    finally:
        engine.close()  # writes the suppressed row


def _refused(location: str | Path) -> int:
    index = open_log_index(location)
    try:
        index.refresh()
        rows = index.page(0, index.count)
        assert [r["outcome"] for r in rows].count("suppressed") == 1
        return sum(index.timeline(5)[2]["refused"])
    finally:
        index.close()


async def test_a_suppressed_row_counts_as_its_refusals(tmp_path: Path) -> None:
    await _flood(tmp_path / "a.db", tmp_path / "ws", VirtualClock(1000.0))
    assert _refused(tmp_path / "a.db") == 500


async def test_the_same_on_postgresql(pg_dsn: str, tmp_path: Path) -> None:
    await _flood(pg_dsn, tmp_path / "ws", VirtualClock(1000.0))
    assert _refused(pg_dsn) == 500

