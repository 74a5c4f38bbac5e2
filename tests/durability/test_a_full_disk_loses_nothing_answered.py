"""SPEC §10 "Storage" on a disk that really fills (a tmpfs, ENOSPC; `test_fail_closed` injects
SQLite's page limit instead): each write is refused with a clear error and changes nothing,
reads and `log verify` go on, nothing answered is lost, no tamper finding is made, and
writes go through again by themselves once space returns. For PostgreSQL, whose database
is on the server, the disk that fills is this machine's anchors folder: the engine's
writes go on, with no finding, and the anchor is made once it can be."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import Engine, StoreFailed, World
from engine.app.cli import main
from engine.store.anchor import Anchor, AnchorFile
from engine.store.pg.store import PGStore
from tests.conftest import notes_world
from tests.durability.smalldisk import fill, small_disk


@pytest.fixture
def disk() -> Iterator[Path]:
    with small_disk(4) as folder:
        yield folder


async def _note(engine: Engine, text: str) -> None:
    decision = await engine.call("c0", "cards.note.append", "n1", {"text": text})
    assert decision.outcome == "ok", decision.message


def _logged(engine: Engine) -> list[str]:
    return [str(row["payload"]) for row in engine.log_rows()]


async def test_a_full_disk_refuses_each_write_and_loses_nothing_answered(
        disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN an engine whose SQLite file is on a small disk, with calls answered
    db = disk / "app.db"
    engine = await notes_world(db, tmp_path, 1)
    answered: list[str] = []
    try:
        for i in range(3):
            answered.append(f"before {i}")
            await _note(engine, answered[-1])
        # WHEN the disk fills up (what the log already holds may still take a few rows)
        filler = fill(disk)
        refused: StoreFailed | None = None
        for i in range(200):
            text = f"full {i} " + "x" * 30_000
            try:
                await _note(engine, text)
            except StoreFailed as exc:
                refused = exc
                break
            answered.append(text)
        # THEN writes are refused, saying so, and change nothing; reads go on
        assert refused is not None, "the disk never filled"
        assert "not written" in str(refused) and "full" in str(refused), str(refused)
        with pytest.raises(StoreFailed, match="full"):
            await engine.revoke("acme.notes", "cards.connected")
        assert engine.state.granted("acme.notes", "cards.connected")
        assert _logged(engine) == answered
        assert engine.verify_log().ok
        # AND once space returns, writes go through without a restart
        filler.unlink()
        answered.append("space back")
        await _note(engine, answered[-1])
        assert await engine.revoke("acme.notes", "cards.connected")
    finally:
        engine.close()
    # AND every answered call and the revoke are in the file; the log verifies
    again = Engine.open(db, world=World(net=None, fs=None))
    try:
        assert _logged(again) == answered
        assert not again.state.granted("acme.notes", "cards.connected")
    finally:
        again.close()
    capsys.readouterr()
    assert main(["log", "verify", "--db", str(db)]) == 0, capsys.readouterr().out


@pytest.mark.postgres
async def test_a_full_anchors_folder_stops_no_write_and_makes_no_finding(
        disk: Path, tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN this machine's anchors folder on a small disk (beside $ARROWGATE_DB's file),
    # full before the engine's first log row (an anchor already there is written in place)
    monkeypatch.setenv("ARROWGATE_DB", str(disk / "data" / "app.db"))
    engine = await notes_world(pg_dsn, tmp_path, 1)
    try:
        store = engine.store
        assert isinstance(store, PGStore)
        anchor, writer = AnchorFile(store.anchor.path), store.tx.anchor
        assert writer is not None
        filler = fill(disk)
        # WHEN calls are made: the store's writes go on, the anchor cannot be made
        for i in range(3):
            await _note(engine, f"full {i}")
        writer.flush()
        assert not anchor.exists()
        # THEN no finding, from the engine or the command line
        assert engine.verify_log().ok
        capsys.readouterr()
        assert main(["log", "verify", "--store", pg_dsn]) == 0, capsys.readouterr().out
        # AND once space returns the next write's anchor names the newest row
        filler.unlink()
        await _note(engine, "space back")
        writer.flush()
        newest = engine.log_rows()[-1]
        state = anchor.read()
        assert state is not None and state.committed == Anchor(newest["seq"], newest["hash"])
        assert len(engine.log_rows()) == 4
    finally:
        engine.close()
    assert main(["log", "verify", "--store", pg_dsn]) == 0, capsys.readouterr().out


async def test_a_database_on_a_full_disk_is_told_so_when_opened(
        disk: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a database closed cleanly on a disk that then filled up
    db = disk / "app.db"
    engine = await notes_world(db, tmp_path, 1)
    await _note(engine, "before")
    engine.close()
    fill(disk)
    # WHEN an engine or log verify opens it (SQLite must make its -shm file beside it)
    # THEN the error says the disk is full, not only "disk I/O error" (read as damage)
    with pytest.raises(StoreFailed, match="no space is left on the disk"):
        Engine.open(db, world=World(net=None, fs=None))
    capsys.readouterr()
    assert main(["log", "verify", "--db", str(db)]) == 2
    told = capsys.readouterr()
    assert "no space is left on the disk" in told.out + told.err, told
