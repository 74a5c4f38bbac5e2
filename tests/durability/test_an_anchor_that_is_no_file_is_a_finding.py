"""An anchor that is not a regular file (a FIFO, a device) is a finding, found at once.

The anchor is read by ``log verify``, the TUI's verifier and every engine that
writes the log. A FIFO in its place must not make any of them wait for a writer
that never comes, and a device (``/dev/zero`` behind a link) must not be read as
if it were an anchor: each is a finding naming the anchor, and an engine never replaces
it: on SQLite it refuses to write past it (fail closed), on both stores.

Found in round 22: a FIFO in the anchor's place hung ``log verify`` (and any
engine opening the store) for good: the anchor was opened for reading with a
plain ``open``, which waits for a FIFO's writer.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.core.errors import StoreFailed
from tests.childrun import arrowgate
from tests.durability.targets import Target


@pytest.fixture
async def logged(world, target: Target) -> Target:
    """A log of 4 rows in the store, the engine closed."""
    for i in range(4):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    return target


def _replace(anchor: Path, kind: str) -> None:
    anchor.unlink()
    if kind == "fifo":
        os.mkfifo(anchor)
    else:
        anchor.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["fifo", "device"])
async def test_an_anchor_that_is_no_file_is_a_finding(logged: Target, tmp_path: Path,
                                                      kind: str) -> None:
    """`log verify` answers at once with a finding naming the anchor; an engine neither
    hangs nor writes past it (on SQLite it refuses the call; on PostgreSQL, whose anchor
    follows COMMIT, the call stands and the anchor is still a finding)."""
    anchor = logged.anchor_path()
    _replace(anchor, kind)
    done = arrowgate(["log", "verify", *logged.args()], tmp_path, timeout=20)
    assert done is not None, "log verify hung on the anchor"
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "anchor" in done.stdout and "not a regular file" in done.stdout, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    engine = logged.open()
    try:
        result = engine.verify_log()
        assert not result.ok and "not a regular file" in result.problem, result
        rows = len(engine.log_rows())
        if logged.postgres:
            # PostgreSQL's anchor is written after COMMIT (engine.store.pg.anchoring):
            # the call stands, and the anchor it could not advance is still found.
            await engine.call("c1", "terminals.run", "t1", {"command": "after"})
            assert len(engine.log_rows()) == rows + 1
        else:
            with pytest.raises(StoreFailed, match="not a regular file"):
                await engine.call("c1", "terminals.run", "t1", {"command": "after"})
            assert len(engine.log_rows()) == rows
        result = engine.verify_log()
        assert not result.ok and "not a regular file" in result.problem, result
    finally:
        engine.close()
    assert anchor.is_fifo() if kind == "fifo" else anchor.is_symlink()
