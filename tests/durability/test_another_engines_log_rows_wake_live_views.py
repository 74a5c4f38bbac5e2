"""A log row another engine commits wakes this engine's live views (`Engine.changes`, which
the TUI's views follow), on both stores alike (SPEC §10 "Storage": every rule holds across
the engines on one store).

A refused call changes nothing but the log: on SQLite its commit moves the file's
``data_version``, which `changes` reads at each look; on PostgreSQL such a batch records
no change on the feed, so its rows must be noticed another way. The engine's own rows
wake none of its views (it knows them), as on SQLite.

Found in round 25: on PostgreSQL, `changes` yielded only for changes on the feed, so
another engine's refused calls never woke a live view (the TUI's log screen looked for
rows each second on its own to make up for it).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine import Engine
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

#: How long a view may take to wake: many of its looks (`INTERVAL`), yet a short wait.
WAKE_S = 3.0
INTERVAL = 0.05


async def _wired(engine: Engine, folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")


async def test_another_engines_log_rows_wake_live_views(target: Target, tmp_path: Path) -> None:
    """Refused calls through another engine (log rows only) wake the view; its own do not."""
    other = target.open()
    await _wired(other, tmp_path / "ws")
    view = target.open()
    changes = view.changes(interval=INTERVAL)
    try:
        # GIVEN a live view following the store, with nothing new to tell
        first = asyncio.ensure_future(anext(changes))
        await asyncio.sleep(10 * INTERVAL)
        assert not first.done()
        # WHEN this engine refuses a call (its own log row): no wake
        refused = await view.call("c1", "agents.prompt", "a1", {"text": "no arrow"})
        assert refused.code == "PERMISSION_DENIED"
        await asyncio.sleep(10 * INTERVAL)
        assert not first.done(), "the engine's own log row woke its view"
        # WHEN another engine refuses a call: only a log row is written
        refused = await other.call("c1", "agents.prompt", "a1", {"text": "no arrow either"})
        assert refused.code == "PERMISSION_DENIED"
        # THEN the view wakes, and reads the row
        await asyncio.wait_for(first, WAKE_S)
        rows = view.log_rows(card="c1")
        assert [r["payload"] for r in rows][-2:] == ["no arrow", "no arrow either"]
    finally:
        await changes.aclose()
        view.close()
        other.close()
