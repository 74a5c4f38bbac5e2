"""Two Engines on one SQLite file in one event loop both write, without freezing the loop.

A batch holds SQLite's write lock until its group commit, a turn of the loop
later; a second engine of the same process waiting for it in SQLite's busy
handler would wait on that very loop. Stores on one file (by device and inode)
know one another (`engine.store.siblings`): before taking the lock, a store
commits the other's batch open on its thread, as the loop's next turn would.
Two engines in one process are served, not refused: tests of the rules across
engines and the catch-up bench open two on one file.

(Found by a helper: the second engine's ``BEGIN IMMEDIATE`` froze the loop for
``busy_timeout``, then failed with "database is locked".)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import Engine, World


async def test_two_engines_on_one_file_both_write_without_freezing_the_loop(
        db_path: Path, tmp_path: Path) -> None:
    """Writes of two engines on one file in the same turn of the loop all commit at once."""
    one = Engine.open(db_path, world=World(net=None, fs=None), busy_timeout=2.0)
    two = Engine.open(db_path, world=World(net=None, fs=None), busy_timeout=2.0)
    try:
        (tmp_path / "ws").mkdir()
        await one.create_workspace("w1", tmp_path / "ws")
        two.catch_up()
        results: list[Any] = await asyncio.gather(*(
            (one if i % 2 else two).add_node({"id": f"n{i}", "type": "note"}, workspace="w1")
            for i in range(10)), return_exceptions=True)
        # (No clock: a write that waited for the other's lock would wait on this very
        # loop, so that lock could never be let go; it could only end in "database is
        # locked" once busy_timeout ran out, which this assertion catches.)
        assert not any(isinstance(r, BaseException) for r in results), results
        # AND each engine sees every note, its own and the other's
        for engine in (one, two):
            engine.catch_up()
            assert sorted(n.id for n in engine.state.canvas.nodes(type="note")) == sorted(
                f"n{i}" for i in range(10))
    finally:
        one.close()
        two.close()
