"""The anchor records the consent history's newest entry too, and `log verify` checks it.

SPEC §8: the consent history is hash-chained "the same way" as the arrow log and
`log verify` checks it. The chain shows no entry was altered, removed or inserted
between others; only the anchor can show that the newest entries were cut off (a
refused consent attempt, an arrow edit, a revoke undone with ``grants`` put back)
or that entries were added at the end by hand. Each commit that changes the history
records its newest entry (seq and hash) with the log's newest row, so a cut or
rewritten tail is a finding, as for the log. An anchor written before the history's
head was recorded leaves the history's tail unchecked; the next write adds it.

(Found by a helper: the anchor covered the arrow log only, so cutting the history's
newest entries passed `log verify`.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main
from engine.core.errors import ApprovalRefused
from engine.store.anchor import HISTORY_EMPTY, Anchor, AnchorFile, AnchorState
from engine.store.history import entry_hash
from tests.durability.targets import Target

pytestmark = pytest.mark.sqlite_only(
    "the history's head is recorded in the SQLite store's anchor file; PostgreSQL's "
    "per-machine anchor (engine.store.pg.anchoring) records the log's newest row only")


def _verify(target: Target, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["log", "verify", *target.args()])
    return code, capsys.readouterr().out


def _anchor(target: Target) -> AnchorFile:
    return AnchorFile(Path(str(target.db) + ".anchor"))


async def test_cutting_the_newest_history_entries_is_a_finding(
        world: Engine, target: Target, clock: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A refused consent attempt and an arrow edit cut off the history's end: found."""
    await world.call("c1", "agents.prompt", "a1", {"text": "hi"})  # the log has a row
    clock.t += 5
    with pytest.raises(ApprovalRefused):  # a refused consent attempt, kept in the history
        await world.grant("acme.prompter", "clipboard.write", by="agent:a1")
    clock.t += 5
    await world.add_arrow({"id": "e7", "from": "c1", "to": "a2"})  # an arrow edit
    world.close()
    assert _verify(target, capsys)[0] == 0
    newest = target.query("select max(seq) from consent")[0][0]
    target.execute(f"delete from consent where seq >= {newest - 1}")
    code, out = _verify(target, capsys)
    assert code == 1, out
    assert f"consent history entries {newest - 1}..{newest} are missing" in out, out


async def test_undoing_the_newest_revoke_by_hand_is_a_finding(
        world: Engine, target: Target, clock: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The revoke's entry deleted and ``grants`` put back as the grant's entry recorded
    it (so the grants digest agrees): the anchor still names the revoke's entry."""
    await world.call("c1", "agents.prompt", "a1", {"text": "hi"})
    clock.t += 5
    await world.grant("acme.prompter", "clipboard.write")
    grants_then = target.query("select package, permission, t, by from grants")
    clock.t += 5
    await world.revoke("acme.prompter", "clipboard.write")
    world.close()
    assert _verify(target, capsys)[0] == 0
    conn = sqlite3.connect(target.db)
    conn.execute("delete from consent where seq = (select max(seq) from consent)")
    conn.execute("delete from grants")
    conn.executemany('insert into grants (package, permission, t, "by") values (?, ?, ?, ?)',
                     grants_then)
    conn.commit()
    conn.close()
    code, out = _verify(target, capsys)
    assert code == 1 and "are missing (the anchor says entry" in out, out


async def test_an_entry_added_at_the_end_by_hand_is_a_finding(
        world: Engine, target: Target, capsys: pytest.CaptureFixture[str]) -> None:
    """An entry appended by someone who knows the hash function chains well, and the
    grants digest is the newest's: only the anchor shows it."""
    world.close()
    assert _verify(target, capsys)[0] == 0
    conn = sqlite3.connect(target.db)
    conn.row_factory = sqlite3.Row
    last = dict(conn.execute("select * from consent order by seq desc limit 1").fetchone())
    forged = {**last, "seq": last["seq"] + 1, "t": last["t"] + 1, "principal": "operator",
              "action": "node.set", "detail": "forged"}
    forged["prev"] = last["hash"]
    forged["hash"] = entry_hash(last["hash"], forged)
    conn.execute(f"insert into consent ({', '.join(forged)}) values "
                 f"({', '.join('?' for _ in forged)})", list(forged.values()))
    conn.commit()
    conn.close()
    code, out = _verify(target, capsys)
    assert code == 1, out
    assert f"consent history entry {last['seq'] + 1} is not the newest entry the anchor " \
           "knows" in out, out


async def test_a_history_only_commit_records_its_entry(world: Engine, target: Target) -> None:
    """A commit that writes no log row but a history entry still advances the anchor:
    its pending record names the entry before COMMIT, the committed one after."""
    head_before = world.store.history.head()
    await world.add_arrow({"id": "e7", "from": "c1", "to": "a2"})
    head = world.store.history.head()
    assert head is not None and head != head_before
    state = _anchor(target).read()
    assert state is not None and head_before is not None
    # Answered with the pending state on disk (or already the committed one).
    assert state.accepts_heads(state.committed, Anchor(*head)), state
    world.close()
    state = _anchor(target).read()
    assert state is not None and state.history == Anchor(*head) and state.pending is None


async def test_an_anchor_without_the_history_head_reads_and_is_completed(
        world: Engine, target: Target, make_engine: Any,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An anchor older than the history's head (log rows only) still verifies, the
    history's tail unchecked; the engine's next write adds the head, and from then a
    cut of the history's end is a finding."""
    await world.call("c1", "agents.prompt", "a1", {"text": "hi"})
    world.close()
    anchor = _anchor(target)
    state = anchor.read()
    assert state is not None and state.history is not None
    anchor.path.unlink()  # the older file: the same log row, no history head
    anchor.write(AnchorState(state.committed))
    anchor.close()
    assert _anchor(target).read() == AnchorState(state.committed)
    assert _verify(target, capsys)[0] == 0
    engine = make_engine()
    await engine.add_arrow({"id": "e7", "from": "c1", "to": "a2"})
    head = engine.store.history.head()
    engine.close()
    recorded = _anchor(target).read()
    assert recorded is not None and recorded.history == Anchor(*head), recorded
    target.execute(f"delete from consent where seq = {head[0]}")
    code, out = _verify(target, capsys)
    assert code == 1 and f"entries {head[0]}..{head[0]} are missing" in out, out


def test_a_history_only_pending_record_accepts_either_side_of_its_commit() -> None:
    """A batch that changed only the history: until its COMMIT is known, the store
    may hold the entry before it or its own, never another; the committed record
    that follows replaces it, and an older one never replaces that."""
    row, before, entry = Anchor(3, "a" * 64), Anchor(5, "b" * 64), Anchor(6, "c" * 64)
    pending = AnchorState(row, None, before, entry)
    assert pending.accepts_heads(row, before) and pending.accepts_heads(row, entry)
    assert not pending.accepts_heads(row, Anchor(4, "d" * 64))
    assert not pending.accepts_heads(row, HISTORY_EMPTY)
    committed = AnchorState(row, history=entry)
    assert pending.newer_than(AnchorState(row, history=before))
    assert committed.newer_than(pending) and not pending.newer_than(committed)
    assert not AnchorState(row, history=before).newer_than(committed)
    assert not committed.covers(pending) and pending.covers(committed)
