"""The anchor's "committed" record is written once the store is idle (issues 17, 19).

`Transactions.flush` syncs the pending record ``{committed: before, pending:
newest}`` before COMMIT and answers; the record naming the newest row alone,
which is what shows a cut of that very batch, follows at the loop's next turn
(`Transactions.settle_anchor`), unless another batch has begun by then, whose
pending record names the row as committed anyway; and at close. These tests
pin the window: a cut of the newest batch is found once the loop has turned,
or once the engine closed, and under load the committed records are left out.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main
from engine.store.anchor import Anchor, AnchorFile, AnchorState
from tests.anchorspy import anchor_writes
from tests.durability.targets import Target

pytestmark = pytest.mark.sqlite_only(
    "the pending record and its later committed one are the SQLite store's; PostgreSQL's "
    "anchor is written after COMMIT in a thread of its own (engine.store.pg.anchoring)")


def _newest(engine: Engine) -> Anchor:
    row = engine.log_rows()[-1]
    return Anchor(row["seq"], row["hash"])


def _entry(engine: Engine) -> Anchor:
    """The consent history's newest entry, which the anchor records with the row."""
    head = engine.store.history.head()
    assert head is not None  # the world's set-up wrote entries
    return Anchor(*head)


def _cut_newest_and_verify(target: Target, newest: Anchor, capsys: Any) -> tuple[int, str]:
    target.execute(f"delete from log where seq = {newest.seq}")
    code = main(["log", "verify", *target.args()])
    return code, capsys.readouterr().out


async def test_a_cut_of_the_newest_batch_is_found_once_the_loop_turns(
        world: Engine, target: Target, capsys: Any) -> None:
    """The engine still open, idle for one turn of the loop: the file names the
    newest row as committed, so deleting it is a finding."""
    for i in range(3):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    newest = _newest(world)
    await asyncio.sleep(0)
    assert AnchorFile(Path(str(target.db) + ".anchor")).read() == AnchorState(
        newest, history=_entry(world))
    code, out = _cut_newest_and_verify(target, newest, capsys)
    assert code == 1 and f"first bad row {newest.seq}" in out, out


async def test_a_cut_is_found_after_a_close_in_the_same_turn(
        world: Engine, target: Target, capsys: Any) -> None:
    """Closed before the loop ever turned after the last commit: `close` writes the
    committed record, and the later turn finds nothing left to write."""
    await world.call("c1", "terminals.run", "t1", {"command": "last"})
    newest, entry = _newest(world), _entry(world)
    world.close()
    assert AnchorFile(Path(str(target.db) + ".anchor")).read() == AnchorState(
        newest, history=entry)
    await asyncio.sleep(0)
    assert AnchorFile(Path(str(target.db) + ".anchor")).read() == AnchorState(
        newest, history=entry)
    code, out = _cut_newest_and_verify(target, newest, capsys)
    assert code == 1 and f"first bad row {newest.seq}" in out, out


async def test_under_load_each_pending_record_stands_for_the_committed_one(
        world: Engine, target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls one after another, each batch begun before the loop was idle: one
    synced pending record a commit, each naming the previous batch's newest row as
    committed, and a single committed record once the calls stop."""
    await asyncio.sleep(0)
    written = anchor_writes(monkeypatch)
    rows: list[Anchor] = []
    for i in range(5):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
        rows.append(_newest(world))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    pending = [w for w in written if w.pending is not None]
    assert [w.pending for w in pending] == rows, written
    assert [w.committed for w in pending[1:]] == rows[:-1]
    committed = AnchorState(rows[-1], history=_entry(world))
    assert [w for w in written if w.pending is None] == [committed], written
    assert AnchorFile(Path(str(target.db) + ".anchor")).read() == committed


async def test_a_cut_before_the_next_batch_is_found(
        world: Engine, target: Target, capsys: Any) -> None:
    """The newest batch cut in the moment between its answer and the loop's next
    turn, then another call: that batch's pending record must not stand in for the
    committed one it replaces (the log no longer ends at the row it would name as
    committed), so the cut is a finding."""
    await world.call("c1", "terminals.run", "t1", {"command": "first"})
    cut = _newest(world)
    target.execute(f"delete from log where seq = {cut.seq}")
    await world.call("c1", "terminals.run", "t1", {"command": "after the cut"})
    await asyncio.sleep(0)
    world.close()
    code = main(["log", "verify", *target.args()])
    out = capsys.readouterr().out
    assert code == 1 and f"first bad row {cut.seq}" in out, out
