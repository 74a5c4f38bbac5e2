"""Crashes at the two legitimate points of a commit leave a log that verifies (issue 15 #14),
and whatever sits where the anchor or a row should be gives a finding, not a traceback (#21)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main
from engine.core.errors import StoreFailed
from engine.store.anchor import Anchor, AnchorFile, AnchorState
from tests.durability.targets import Target

ROOT = Path(__file__).resolve().parents[2]

# A process that makes one call and dies (os._exit: no COMMIT, no cleanup) at
# the named point: "before-commit" once the pending anchor is on disk,
# "after-commit" once the transaction committed, before the anchor update.
CRASHER = textwrap.dedent("""
    import asyncio, os, sys
    from engine import Engine, World
    from engine.store.anchor import AnchorFile

    db, point, command = sys.argv[1], sys.argv[2], sys.argv[3]
    real_write = AnchorFile.write

    def write(self, state):
        if point == "after-commit" and state.pending is None:
            os._exit(0)
        real_write(self, state)
        if point == "before-commit" and state.pending is not None:
            os._exit(0)

    AnchorFile.write = write

    async def run():
        world = World(net=None, fs=None)
        if db.startswith("postgresql://"):
            engine = Engine.open(store=db, world=world)
        else:
            engine = Engine.open(db, world=world)
        await engine.call("c1", "terminals.run", "t1", {"command": command})
        # PostgreSQL's anchor is written by a thread after the call returns.
        writer = getattr(engine.store.tx, "anchor", None)
        if hasattr(writer, "flush"):
            writer.flush()
        raise SystemExit("the call returned: no crash happened")

    asyncio.run(run())
""")


def _crash(db: Path | str, point: str, command: str) -> None:
    result = subprocess.run([sys.executable, "-c", CRASHER, str(db), point, command],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def _verify(store: Target, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["log", "verify", *store.args()])
    return code, capsys.readouterr().out


@pytest.fixture
async def logged(world: Engine, target: Target) -> Target:
    """A log of 3 rows in the store, the engine closed."""
    for i in range(3):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    return target


#: Why the crash before COMMIT is SQLite's alone.
NO_PENDING = ("on PostgreSQL the anchor is advanced only after COMMIT (rows after this "
              "machine's newest are never a finding there, so a pending record would vouch "
              "for nothing); its crash after COMMIT is test_crash_after_commit_leaves_the_"
              "anchor_behind_and_verifies")
#: Why a write refused for an anchor it cannot advance is SQLite's alone.
AFTER_COMMIT = ("on PostgreSQL the anchor is advanced after COMMIT, outside the write lock: "
                "an anchor that cannot be written is log verify's finding, not a refusal")


@pytest.mark.sqlite_only(NO_PENDING)
def test_crash_before_commit_then_after_commit_verifies(
        logged: Target, capsys: pytest.CaptureFixture[str]) -> None:
    """Crash 1 leaves a pending anchor for a row that never committed; the next
    transaction writes a different row of the same number, and crash 2 strikes
    after its COMMIT: the untouched log still verifies after each."""
    before = logged.query("select max(seq) from log")[0][0]
    _crash(logged.location, "before-commit", "lost")
    anchor = AnchorFile(logged.anchor_path()).read()
    assert anchor is not None and anchor.pending is not None
    assert anchor.pending.seq == before + 1  # the pending row on file never committed
    assert logged.query("select max(seq) from log")[0][0] == before
    code, out = _verify(logged, capsys)
    assert code == 0, out
    _crash(logged.location, "after-commit", "kept")
    assert tuple(logged.query("select max(seq), payload from log where seq = (select max(seq) "
                              "from log) group by payload")[0]) == (before + 1, "kept")
    code, out = _verify(logged, capsys)
    assert code == 0, out
    # And the engine carries on from there.
    engine = logged.open()
    assert engine.verify_log().ok
    engine.close()


def test_crash_after_commit_leaves_the_anchor_behind_and_verifies(
        logged: Target, capsys: pytest.CaptureFixture[str]) -> None:
    """A crash between COMMIT and the anchor's update: the row is there, the anchor names
    it as pending (SQLite) or still names the row before it (PostgreSQL); both verify,
    and the next engine's write catches the anchor up."""
    before = logged.query("select max(seq) from log")[0][0]
    _crash(logged.location, "after-commit", "kept")
    assert logged.query("select max(seq) from log")[0][0] == before + 1
    anchor = AnchorFile(logged.anchor_path()).read()
    assert anchor is not None and anchor.committed is not None
    assert anchor.committed.seq == before
    code, out = _verify(logged, capsys)
    assert code == 0, out
    engine = logged.open()
    try:
        assert engine.verify_log().ok
    finally:
        engine.close()
    # Cutting the row the anchor does not know yet is not found; cutting one it
    # knows is.
    logged.execute(f"delete from log where seq >= {before}")
    code, out = _verify(logged, capsys)
    assert code == 1 and f"first bad row {before}" in out, out


def test_pending_rows_compare_by_sequence_and_hash() -> None:
    """A new pending row of the same number replaces one that never committed; a late
    'committed only' write does not undo it; a committed row of another hash stays."""
    x, a, b = Anchor(3, "x"), Anchor(4, "a"), Anchor(4, "b")
    crashed = AnchorState(x, a)
    assert AnchorState(x, b).newer_than(crashed)
    assert not AnchorState(x, a).newer_than(crashed)
    assert not AnchorState(x).newer_than(AnchorState(x, b))
    assert not AnchorState(Anchor(3, "forged"), b).newer_than(crashed)
    assert AnchorState(b).newer_than(AnchorState(x, b))


@pytest.mark.parametrize("kind", ["directory", "garbage", "wrong types", "unreadable"])
def test_a_bad_anchor_is_a_finding(logged: Target, capsys: pytest.CaptureFixture[str],
                                   kind: str) -> None:
    """A directory, garbage or an unreadable file in the anchor's place: exit 1 with a
    finding, no traceback, from the CLI and from the engine."""
    anchor = logged.anchor_path()
    if kind == "directory":
        anchor.unlink()
        anchor.mkdir()
    elif kind == "garbage":
        anchor.write_bytes(b"\xff\x00[[[")
    elif kind == "wrong types":
        anchor.write_text('{"committed": {"seq": [1], "hash": {}}}')
    else:
        if os.geteuid() == 0:
            pytest.skip("root reads any file")
        anchor.chmod(0)
    code, out = _verify(logged, capsys)
    assert code == 1 and "anchor" in out and "not readable" in out, out
    engine = logged.open()
    result = engine.verify_log()
    engine.close()
    assert not result.ok and "not readable" in result.problem


@pytest.mark.sqlite_only("a column of a SQLite file holds any type; PostgreSQL's text "
                         "column refuses a bytea value, so this tampering cannot happen there")
def test_a_blob_payload_is_a_finding(logged: Target,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A payload stored as a BLOB names its row; it does not crash verify."""
    conn = sqlite3.connect(logged.db)
    conn.execute("update log set payload = ? where seq = 2", [b"\x00binary"])
    conn.commit()
    conn.close()
    code, out = _verify(logged, capsys)
    assert code == 1 and "first bad row 2" in out and "BLOB" in out, out


def test_a_malformed_chain_column_is_a_finding(logged: Target,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A chain column that is not JSON is a finding on its row."""
    logged.execute("update log set chain = '[[[' where seq = 3")
    code = main(["log", "verify", *logged.args()])
    out = capsys.readouterr().out
    assert code == 1 and "first bad row 3" in out, out


@pytest.mark.sqlite_only(AFTER_COMMIT)
async def test_writing_with_a_directory_for_an_anchor_fails_closed(logged: Target) -> None:
    """The engine cannot advance an anchor that is a directory: the change is refused with
    STORE_FAILED and nothing is written, rather than a log that outruns its anchor."""
    anchor = logged.anchor_path()
    anchor.unlink()
    anchor.mkdir()
    engine = logged.open()
    try:
        rows = len(engine.log_rows())
        with pytest.raises(StoreFailed, match="Is a directory"):
            await engine.call("c1", "terminals.run", "t1", {"command": "after"})
        assert len(engine.log_rows()) == rows
        result = engine.verify_log()
        assert not result.ok and "not readable" in result.problem
    finally:
        engine.close()
