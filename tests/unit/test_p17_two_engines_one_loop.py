"""p17: two Engines on one SQLite file in one event loop deadlock until busy_timeout.

Each engine's write opens a ``BEGIN IMMEDIATE`` batch and commits it a turn of the
loop later (`Transactions.open_batch` / `schedule_flush`, engine/store/
transactions.py). When the second engine writes in the same turn, its ``BEGIN
IMMEDIATE`` waits in SQLite's busy handler — synchronously, on the loop's thread —
for a lock the first engine can only release once the loop turns: the whole loop
is frozen for ``busy_timeout`` (10 s by default) and the second operation then fails
with StoreFailed ("database is locked"). Every time, not by bad luck: a call of
the second engine made while the first has a batch open always fails.
SPEC §10 has several engines on one store hold every rule; spec silent on one
process, and a careful user (an app that opens an Engine per request, say) expects
both to be served, or a clear refusal when the second is opened — not a frozen loop.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from engine import Engine, World


async def test_two_engines_on_one_file_both_write_without_freezing_the_loop(
        db_path: Path, tmp_path: Path) -> None:
    one = Engine.open(db_path, world=World(net=None, fs=None), busy_timeout=2.0)
    two = Engine.open(db_path, world=World(net=None, fs=None), busy_timeout=2.0)
    try:
        (tmp_path / "ws").mkdir()
        await one.create_workspace("w1", tmp_path / "ws")
        two.catch_up()
        started = time.monotonic()
        results: list[Any] = await asyncio.gather(
            one.add_node({"id": "n1", "type": "note"}, workspace="w1"),
            two.add_node({"id": "n2", "type": "note"}, workspace="w1"),
            return_exceptions=True)
        took = time.monotonic() - started
        assert not any(isinstance(r, BaseException) for r in results), results
        assert took < 1.0, f"the loop was held {took:.1f} s"
    finally:
        one.close()
        two.close()
