"""Group commit: calls that arrive together share one transaction, each returns durable."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import Engine, StoreFailed

from ..conftest import notes_world
from .targets import Target


async def _engine(db: Path | str, tmp_path: Path, cards: int) -> Engine:
    return await notes_world(db, tmp_path, cards)


async def test_calls_arriving_together_commit_together(target: Target, tmp_path: Path) -> None:
    """200 concurrent calls take a handful of commits; each row is committed (on disk, or
    on the PostgreSQL server with synchronous_commit on) when its call returns."""
    engine = await _engine(target.location, tmp_path, 4)
    before = engine.commits
    seen_on_return: list[bool] = []

    async def one(i: int) -> None:
        d = await engine.call(f"c{i % 4}", "cards.note.append", "n1", {"text": str(i)})
        assert d.outcome == "ok"
        # Another connection reads it: only committed rows are visible there.
        rows = target.query("select count(*) from log where payload = ?", [str(i)])
        seen_on_return.append(rows[0][0] == 1)

    await asyncio.gather(*(one(i) for i in range(200)))
    assert all(seen_on_return) and len(seen_on_return) == 200
    assert engine.commits - before <= 3
    assert engine.verify_log().ok
    text = (await engine.call("c0", "cards.note.read", "n1")).value
    assert len(text.split("\n")) == 200
    engine.close()


@pytest.mark.sqlite_only("the commit fails here by the SQLite store's anchor file; on "
                         "PostgreSQL a batch fails when its connection is lost "
                         "(tests/pg/test_kills.py)")
async def test_a_failed_group_commit_fails_every_call_in_it(target: Target, tmp_path: Path,
                                                            monkeypatch) -> None:
    """When the shared commit fails, every call in the batch is refused and memory matches."""
    db = tmp_path / "h.db"
    engine = await _engine(db, tmp_path, 2)
    rows_before = len(engine.log_rows())
    # The set-up's last batch (history entries) leaves its committed anchor record
    # to the loop's next turn: written before the count starts.
    await asyncio.sleep(0)
    real_write = engine.anchor.write  # type: ignore[union-attr]
    calls = {"n": 0}

    def failing(state):
        calls["n"] += 1
        if state.pending is not None:
            raise OSError(28, "No space left on device")
        return real_write(state)

    monkeypatch.setattr(engine.anchor, "write", failing)
    results = await asyncio.gather(
        *(engine.call(f"c{i % 2}", "cards.note.append", "n1", {"text": str(i)})
          for i in range(10)), return_exceptions=True)
    assert all(isinstance(r, StoreFailed) for r in results)
    assert calls["n"] == 1  # one batch, one failed commit
    monkeypatch.undo()
    assert len(engine.log_rows()) == rows_before
    assert (await engine.call("c0", "cards.note.read", "n1")).value == ""
    engine.close()


async def test_a_batch_of_calls_is_durable_when_it_returns(target: Target,
                                                           tmp_path: Path) -> None:
    """`Engine.call_many`: one commit for the batch, every row committed (seen by another
    connection) once it returns, in the order given, with the answers of calls made alone."""
    engine = await _engine(target.location, tmp_path, 4)
    before = engine.commits
    results = await engine.call_many([(f"c{i % 4}", "cards.note.append", "n1",
                                       {"text": str(i)}, None) for i in range(200)])
    assert all(d.outcome == "ok" for d in results if not isinstance(d, Exception))
    assert not [d for d in results if isinstance(d, Exception)]
    assert engine.commits - before == 1
    rows = target.query("select payload from log where call = ? order by seq",
                        ["cards.note.append"])
    assert [r[0] for r in rows] == [str(i) for i in range(200)]
    text = (await engine.call("c0", "cards.note.read", "n1")).value
    assert text.split("\n") == [str(i) for i in range(200)]
    assert engine.verify_log().ok
    engine.close()


@pytest.mark.sqlite_only("the commit fails here by the SQLite store's anchor file")
async def test_a_failed_commit_fails_every_call_of_the_batch(target: Target, tmp_path: Path,
                                                            monkeypatch) -> None:
    """The batch's commit fails: every call gets StoreFailed, nothing is written, memory
    agrees (fail closed), and the next batch goes through."""
    engine = await _engine(tmp_path / "h.db", tmp_path, 2)
    rows_before = len(engine.log_rows())
    real_write = engine.anchor.write  # type: ignore[union-attr]

    def failing(state):
        if state.pending is not None:
            raise OSError(28, "No space left on device")
        return real_write(state)

    monkeypatch.setattr(engine.anchor, "write", failing)
    results = await engine.call_many([(f"c{i % 2}", "cards.note.append", "n1",
                                       {"text": str(i)}, None) for i in range(10)])
    assert all(isinstance(r, StoreFailed) for r in results)
    monkeypatch.undo()
    assert len(engine.log_rows()) == rows_before
    assert (await engine.call("c0", "cards.note.read", "n1")).value == ""
    again = await engine.call_many([("c0", "cards.note.append", "n1", {"text": "x"}, None)])
    assert [getattr(d, "outcome", d) for d in again] == ["ok"]
    assert engine.verify_log().ok
    engine.close()
