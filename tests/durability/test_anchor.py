"""The anchor file written in place (issue 19): two slots, one ``fdatasync`` per commit.

A torn slot falls back to the other; garbage in both is a finding; old
whole-file JSON anchors still read and are converted by their next write; and
a power cut at any moment of the commit protocol leaves a file whose state
accepts the database's newest row.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World
from engine.app.cli import main
from engine.store import anchor as anchor_module
from engine.store.anchor import FILE_SIZE, SLOT, Anchor, AnchorFile, AnchorState
from tests.anchorspy import anchor_writes
from tests.durability.targets import Target

DATA = Path(__file__).parent.parent / "data"
NO_ANCHOR = "the anchor is a file beside the SQLite database; PostgreSQL has none"


def _row(seq: int) -> Anchor:
    return Anchor(seq, f"{seq:064x}")


def _commit(anchor: AnchorFile, before: Anchor | None, row: Anchor) -> None:
    """The two writes `Transactions.flush` makes around one COMMIT."""
    anchor.write(AnchorState(before, row))
    anchor.write(AnchorState(row))


@pytest.fixture
def anchor(tmp_path: Path) -> Iterator[AnchorFile]:
    found = AnchorFile(tmp_path / "x.db.anchor")
    yield found
    found.close()


def _newest_slot(path: Path) -> int:
    """The slot (0 or 1) the reader takes now."""
    data = path.read_bytes()
    slots = [s for s in (anchor_module._slot(0, data), anchor_module._slot(1, data)) if s]
    return max(slots, key=lambda s: s.counter).index


def test_a_torn_slot_leaves_the_other(anchor: AnchorFile) -> None:
    """Garbage over the newest slot: the reader takes the other, an older state that
    still names the newest row the database can hold."""
    for seq in range(1, 4):
        _commit(anchor, _row(seq - 1) if seq > 1 else None, _row(seq))
    assert anchor.path.stat().st_size == FILE_SIZE
    assert anchor.read() == AnchorState(_row(3))
    newest = _newest_slot(anchor.path)
    with open(anchor.path, "r+b") as fh:
        fh.seek(newest * SLOT + 20)
        fh.write(b"\xde\xad\xbe\xef" * 8)
    assert anchor.read() == AnchorState(_row(2), _row(3))
    # The next write goes over the torn slot, never over the whole one.
    _commit(anchor, _row(3), _row(4))
    assert anchor.read() == AnchorState(_row(4))


def test_garbage_in_both_slots_is_a_finding(anchor: AnchorFile) -> None:
    _commit(anchor, None, _row(1))
    _commit(anchor, _row(1), _row(2))
    anchor.path.write_bytes(os.urandom(FILE_SIZE))
    with pytest.raises(ValueError, match="not readable.*neither of its two slots"):
        anchor.read()


def test_a_slot_with_a_valid_checksum_but_no_state_is_a_finding(anchor: AnchorFile) -> None:
    """Someone who forges a record with a good CRC gets a finding, not a traceback."""
    _commit(anchor, None, _row(1))
    record = anchor_module._HEAD.pack(anchor_module.MAGIC, 99, 1, 7) + b"[1,2,3]"
    record += anchor_module._CRC.pack(zlib.crc32(record))
    with open(anchor.path, "r+b") as fh:
        fh.seek(SLOT)
        fh.write(record)
    with pytest.raises(ValueError, match="not readable"):
        anchor.read()


def test_an_old_anchor_reads_and_is_converted_by_its_next_write(tmp_path: Path) -> None:
    path = tmp_path / "two-chain.sqlite.anchor"
    shutil.copy(DATA / "two-chain.sqlite.anchor", path)
    anchor = AnchorFile(path)
    old = anchor.read()
    assert old is not None and old.committed is not None and old.committed.seq == 4
    anchor.write(old)  # not newer: nothing is written, the old file stays
    assert path.read_bytes() == (DATA / "two-chain.sqlite.anchor").read_bytes()
    row = Anchor(5, "e" * 64)
    anchor.write(AnchorState(old.committed, row))
    assert path.stat().st_size == FILE_SIZE
    assert anchor.read() == AnchorState(old.committed, row)
    anchor.write(AnchorState(row))
    assert AnchorFile(path).read() == AnchorState(row)
    anchor.close()


def test_an_older_state_never_replaces_a_newer_one(anchor: AnchorFile) -> None:
    _commit(anchor, None, _row(1))
    _commit(anchor, _row(1), _row(2))
    anchor.write(AnchorState(_row(1)))
    anchor.write(AnchorState(None, _row(1)))
    assert anchor.read() == AnchorState(_row(2))


def test_a_commit_costs_one_fdatasync_and_no_fsync(anchor: AnchorFile,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the file's creation, a pending write is synced once and the committed
    write not at all; nothing is renamed."""
    _commit(anchor, None, _row(1))
    calls: list[str] = []
    real_sync = anchor_module._datasync

    def datasync(fd: int) -> None:
        calls.append("fdatasync")
        real_sync(fd)

    monkeypatch.setattr(anchor_module, "_datasync", datasync)
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append("fsync"))
    monkeypatch.setattr(os, "replace", lambda *a: calls.append("replace"))
    for seq in range(2, 12):
        _commit(anchor, _row(seq - 1), _row(seq))
    assert calls == ["fdatasync"] * 10
    assert anchor.read() == AnchorState(_row(11))


def test_a_replaced_or_removed_file_is_opened_afresh(anchor: AnchorFile) -> None:
    """The held descriptor never writes to a file no longer at the path."""
    _commit(anchor, None, _row(1))
    anchor.path.unlink()
    _commit(anchor, _row(1), _row(2))
    assert AnchorFile(anchor.path).read() == AnchorState(_row(2))
    other = anchor.path.with_name("other")
    shutil.copy(anchor.path, other)
    os.replace(other, anchor.path)
    _commit(anchor, _row(2), _row(3))
    assert AnchorFile(anchor.path).read() == AnchorState(_row(3))


class _Disk:
    """Records what reached the disk: the image at the last sync, and the writes since."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.synced = path.read_bytes()
        self.unsynced: list[tuple[int, bytes]] = []
        #: Called as a sync starts: a power cut may strike while it runs.
        self.before_sync: Any = None

    def pwrite(self, real: Any) -> Any:
        def pwrite(fd: int, data: bytes, offset: int) -> int:
            self.unsynced.append((offset, bytes(data)))
            return int(real(fd, data, offset))
        return pwrite

    def sync(self, real: Any) -> Any:
        def sync(fd: int) -> None:
            if self.before_sync is not None:
                self.before_sync()
            real(fd)
            self.synced, self.unsynced = self.path.read_bytes(), []
        return sync

    def images(self) -> Iterator[bytes]:
        """Every file a power cut now may leave: each unsynced write lost, torn
        (its first half, or garbage) or whole."""
        outcomes = ("lost", "half", "garbage", "whole")
        for choice in itertools.product(outcomes, repeat=len(self.unsynced)):
            image = bytearray(self.synced)
            for (offset, data), what in zip(self.unsynced, choice):
                if what == "half":
                    data = data[:len(data) // 2]
                elif what == "garbage":
                    data = bytes((b * 7 + 13) % 256 for b in data)
                elif what == "lost":
                    continue
                image[offset:offset + len(data)] = data
            yield bytes(image)


def test_a_power_cut_at_any_moment_leaves_an_accepting_anchor(
        anchor: AnchorFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit protocol — pending write, COMMIT, committed write — with crashes
    before COMMIT (a pending row that never committed, then another of the same
    number): at every step, whatever the unsynced writes left, the state on disk
    accepts the database's newest row."""
    _commit(anchor, None, _row(1))
    disk = _Disk(anchor.path)
    monkeypatch.setattr(os, "pwrite", disk.pwrite(os.pwrite))
    monkeypatch.setattr(anchor_module, "_datasync", disk.sync(anchor_module._datasync))
    newest = _row(1)  # the database's newest durable row

    checked = {"during a sync": 0}

    def check() -> None:
        for image in disk.images():
            state = anchor_module._decode(image)
            assert state.accepts(newest), (state, newest)

    def during_sync() -> None:
        checked["during a sync"] += 1
        check()

    disk.before_sync = during_sync

    for seq in range(2, 14):
        row = _row(seq) if seq % 4 else Anchor(seq, "f" * 64)
        if seq % 4 == 0:
            # A process dies after its pending write: that row never commits.
            anchor.write(AnchorState(newest, Anchor(seq, "0" * 64)))
            check()
        anchor.write(AnchorState(newest, row))
        check()
        newest = row  # COMMIT (synchronous=FULL: durable once it returns)
        check()
        if seq % 3:  # sometimes the process dies before its committed write
            anchor.write(AnchorState(row))
            check()
    state = anchor.read()
    assert state is not None and state.accepts(newest)
    assert checked["during a sync"] >= 12


@pytest.mark.sqlite_only(NO_ANCHOR)
async def test_torn_slots_through_log_verify(world: Engine, target: Target,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """One torn slot still verifies; two are a finding (exit 1), not a traceback."""
    for i in range(3):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    path = Path(str(target.db) + ".anchor")
    newest = _newest_slot(path)
    with open(path, "r+b") as fh:
        fh.seek(newest * SLOT)
        fh.write(b"\0" * 64)
    assert main(["log", "verify", "--db", str(target.db)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    with open(path, "r+b") as fh:
        fh.seek((1 - newest) * SLOT)
        fh.write(b"\0" * 64)
    code = main(["log", "verify", "--db", str(target.db)])
    out = capsys.readouterr().out
    assert code == 1 and "not readable" in out and "neither of its two slots" in out, out
    # The engine opens, reports the same, and its next commit writes a whole new file.
    engine = Engine.open(target.db, world=World(net=None, fs=None))
    try:
        assert "neither of its two slots" in engine.verify_log().problem
        await engine.call("c1", "terminals.run", "t1", {"command": "after"})
        assert engine.verify_log().ok
    finally:
        engine.close()


@pytest.mark.sqlite_only(NO_ANCHOR)
async def test_an_engine_converts_an_old_anchor(world: Engine, target: Target,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A database whose anchor is in the old format verifies, and keeps verifying
    once the engine's next commit has converted it."""
    for i in range(3):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    path = Path(str(target.db) + ".anchor")
    state = AnchorFile(path).read()
    assert state is not None and state.committed is not None
    path.write_text('{"committed": {"seq": %d, "hash": "%s"}, "pending": null}'
                    % (state.committed.seq, state.committed.hash))
    assert main(["log", "verify", "--db", str(target.db)]) == 0, capsys.readouterr().out
    engine = Engine.open(target.db, world=World(net=None, fs=None))
    try:
        await engine.call("c1", "terminals.run", "t1", {"command": "after"})
        assert engine.verify_log().ok
    finally:
        engine.close()
    assert path.stat().st_size == FILE_SIZE
    assert main(["log", "verify", "--db", str(target.db)]) == 0, capsys.readouterr().out


def test_the_file_is_laid_out_as_the_readme_says(anchor: AnchorFile) -> None:
    """Someone checking by hand reads the anchor without arrowgate's code."""
    _commit(anchor, None, _row(1))
    _commit(anchor, _row(1), _row(2))
    data = anchor.path.read_bytes()
    assert len(data) == 8192
    found = []
    for start in (0, 4096):
        magic, counter, _flags, length = struct.unpack_from(">8sQBH", data, start)
        end = start + 19 + length
        (crc,) = struct.unpack_from(">I", data, end)
        if magic == b"AGANCHR1" and crc == zlib.crc32(data[start:end]):
            found.append((counter, json.loads(data[start + 19:end])))
    assert max(found)[1] == {"committed": {"seq": 2, "hash": _row(2).hash}, "pending": None}


@pytest.mark.sqlite_only(NO_ANCHOR)
async def test_every_commit_syncs_a_pending_anchor_first(
        world: Engine, target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every commit, the first of a newly opened engine included (the one that
    also writes the database's ``anchored`` mark), writes the pending state
    naming its newest row before COMMIT; the committed one follows once the
    loop turns (`Transactions.settle_anchor`), after the call was answered."""
    world.close()
    written = anchor_writes(monkeypatch)
    path = Path(str(target.db) + ".anchor")
    for _opening in range(2):
        engine = Engine.open(target.db, world=World(net=None, fs=None))
        try:
            for i in range(3):
                written.clear()
                before = AnchorFile(path).read()
                await engine.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
                newest = engine.log_rows()[-1]
                row = Anchor(newest["seq"], newest["hash"])
                # The consent history's newest entry, recorded with the row
                # (the call left it as it was).
                entry = Anchor(*engine.store.history.head())
                assert [w.pending for w in written] == [row], written
                # Answered with the pending state on disk: it accepts the row.
                assert AnchorFile(path).read() == AnchorState(
                    before.committed if before else None, row, entry)
                await asyncio.sleep(0)  # the loop's next turn: idle
                assert [w.pending for w in written] == [row, None], written
                assert written[1].committed == row
                assert AnchorFile(path).read() == AnchorState(row, history=entry)
        finally:
            engine.close()


def _fresh(data: bytes) -> tuple[Any, ...]:
    """What decoding ``data`` afresh says of it, as `_Known` keeps it."""
    slots = anchor_module._slots(data)
    assert slots is not None
    base = anchor_module._base(slots)
    assert base is not None
    return (max(s.counter for s in slots), anchor_module._state_of(data, slots),
            base[0].index, base[1], base[0].durable)


def _known(anchor: AnchorFile) -> tuple[Any, ...]:
    known = anchor._known
    assert known is not None
    return (known.counter, known.current, known.base, known.base_state, known.base_durable)


def test_what_a_write_knows_of_the_file_is_what_reading_it_says(anchor: AnchorFile) -> None:
    """A write keeps the file as it left it and what it says (`_Known`), so the next
    write that finds the same bytes does not decode them: that must be, slot for slot,
    what decoding the file gives — through synced and unsynced writes, a pending row
    that never committed, and a torn slot."""
    _commit(anchor, None, _row(1))
    states = [AnchorState(_row(1), _row(2)), AnchorState(_row(2)),
              AnchorState(_row(2), Anchor(3, "f" * 64)),  # never committed
              AnchorState(_row(2), _row(3)), AnchorState(_row(3)),
              AnchorState(_row(3), _row(4)), AnchorState(_row(4))]
    for state in states:
        anchor.write(state)
        known = anchor._known
        data = anchor.path.read_bytes()
        assert known is not None and known.data == data
        assert _known(anchor) == _fresh(data)
        assert anchor.read() == state
    newest = _newest_slot(anchor.path)
    with open(anchor.path, "r+b") as fh:  # torn: the next write decodes afresh
        fh.seek(newest * SLOT + 20)
        fh.write(b"\xde\xad\xbe\xef" * 8)
    _commit(anchor, _row(4), _row(5))
    assert anchor._known is not None and anchor._known.data == anchor.path.read_bytes()
    assert _known(anchor) == _fresh(anchor.path.read_bytes())


def test_a_write_by_another_writer_is_read_not_assumed(anchor: AnchorFile,
                                                       tmp_path: Path) -> None:
    """Another process (here another AnchorFile on the same file) advanced the anchor
    after our last write: our next write reads its state and never goes back behind it."""
    _commit(anchor, None, _row(1))
    other = AnchorFile(anchor.path)
    try:
        _commit(other, _row(1), _row(2))
    finally:
        other.close()
    anchor.write(AnchorState(_row(1)))  # older than the file's: not written
    assert anchor.read() == AnchorState(_row(2))
    _commit(anchor, _row(2), _row(3))
    assert anchor.read() == AnchorState(_row(3))
    assert anchor._known is not None
    assert anchor._known.current == AnchorState(_row(3))


def test_a_slot_body_is_the_json_of_its_state() -> None:
    """A slot's body, written out by hand, is byte for byte what ``json.dumps`` makes of
    the state (so files written before and after read the same)."""
    h = "ab" * 32
    for state in (AnchorState(None), AnchorState(Anchor(1, h)),
                  AnchorState(None, Anchor(1, h)), AnchorState(Anchor(7, h), Anchor(9, "c" * 64)),
                  AnchorState(Anchor(2**70, 'odd "é\\\n'), None),
                  AnchorState(Anchor(1, h), None, Anchor(0, "0" * 64)),
                  AnchorState(Anchor(1, h), Anchor(2, h), Anchor(3, h), Anchor(4, "d" * 64)),
                  AnchorState(None, None, Anchor(3, h), Anchor(4, 'odd "é\\\n'))):
        out: dict[str, Any] = {"committed": None, "pending": None}
        # The history's head only when recorded (older bodies have no such keys).
        names = ("committed", "pending", "history", "history_pending")
        if state.history is not None:
            out.update(history=None, history_pending=None)
        for name in names:
            value = getattr(state, name)
            if value is not None:
                out[name] = {"seq": value.seq, "hash": value.hash}
        assert anchor_module._body(state) == json.dumps(out).encode("utf-8")
        assert anchor_module._state(anchor_module._body(state)) == state
