"""p17: an fs.writeText whose caller is cancelled writes the file but logs nothing.

`Calls._carry_out` (engine/services/calls.py:260) awaits the file work
(`World.files` -> `Files.__call__`, a pool thread: engine/effects/files.py:190)
and only then, in ``with self.ctx.write()``, writes the call's log row and its
rate event. Cancelling the caller (``asyncio.wait_for`` timing out,
``task.cancel()``) while the thread works does not stop the thread: the file is
written in the workspace, but the CancelledError skips the log row — the arrow
log has no trace of a card's write (SPEC §8: every call is logged; §10 a log row
is durable once the call returns) and the write never counts toward anything.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import Engine, World
from tests.conftest import manifest, offer_install


async def test_a_cancelled_file_write_that_happened_is_logged(
        tmp_path: Path, clock: Any) -> None:
    (tmp_path / "app").mkdir()  # the app's data apart from the project folder
    engine = Engine.open(tmp_path / "app" / "arrowgate.db", clock=clock, world=World(net=None))
    try:
        folder = tmp_path / "ws"
        folder.mkdir()
        await engine.create_workspace("w1", folder)
        await offer_install(engine, manifest("acme.files", {"fs.write": {}}))
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.files"},
                              workspace="w1")
        # WHEN the caller gives up on a write while the file work is under way
        call = asyncio.ensure_future(engine.call(
            "c1", "fs.writeText", None, {"path": "out.txt", "text": "x" * 200_000}))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while not (folder / "out.txt").exists() and loop.time() < deadline:
            await asyncio.sleep(0)
        call.cancel()
        try:
            await call
        except asyncio.CancelledError:
            pass
        for _ in range(50):  # let the thread finish its write
            await asyncio.sleep(0.01)
        # THEN the write happened ...
        assert (folder / "out.txt").exists()
        # ... and so the arrow log says so (it says nothing: the row was skipped)
        rows = engine.log_rows(card="c1", call="fs.writeText")
        assert rows, "the card wrote a file in the workspace and the log has no row of it"
    finally:
        engine.close()
