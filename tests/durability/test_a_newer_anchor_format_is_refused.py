"""An anchor in a format newer than this code's is refused, named, and never written over.

The anchor's format has a version, the last byte of each slot's magic (``AGANCHR1``).
A newer arrowgate that changes the format writes its own version there: this code
cannot read what that anchor vouches for, and replacing it with a format-1 file would
undo the newer engine's record (a migration backwards). So, as a store whose ledger
records a newer engine's step, the store is refused at open, naming the version and
changing nothing, and the log's verbs refuse it (exit 2: no finding is made), on both
stores (PostgreSQL's anchor is this machine's file of it, `engine.store.pg.anchoring`).
A write that meets such a file (a newer engine wrote it since this one opened) does not
happen. Garbage in both slots is still a finding the next commit writes over (see
tests/durability/test_anchor.py).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.core.errors import StoreFailed
from engine.store.anchor import SLOT, Anchor, AnchorFile, AnchorState
from tests.conftest import manifest, offer_install, open_store

_HEAD = struct.Struct(">8sQBH")


def _as_format_2(path: Path) -> bytes:
    """Rewrite every whole slot of ``path`` as a format-2 record (its magic's version 2,
    its checksum made again), as a newer engine would leave it; returns the bytes."""
    data = bytearray(path.read_bytes())
    for start in (0, SLOT):
        magic, _counter, _flags, length = _HEAD.unpack_from(data, start)
        if magic != b"AGANCHR1":
            continue
        end = start + _HEAD.size + length
        data[start:start + 8] = b"AGANCHR2"
        struct.pack_into(">I", data, end, zlib.crc32(bytes(data[start:end])))
    path.write_bytes(bytes(data))
    return bytes(data)


def test_a_newer_format_is_read_as_newer_and_never_written_over(tmp_path: Path) -> None:
    """The file alone: reading it names the version; a write raises and leaves it."""
    # GIVEN an anchor a newer engine rewrote in its format
    anchor = AnchorFile(tmp_path / "app.db.anchor")
    anchor.write(AnchorState(None, Anchor(1, "a" * 64)))
    anchor.write(AnchorState(Anchor(1, "a" * 64)))
    anchor.close()
    newer = _as_format_2(anchor.path)
    # WHEN this code reads it, THEN it says a newer arrowgate wrote it, in format 2
    with pytest.raises(ValueError, match="newer arrowgate.*format 2"):
        AnchorFile(anchor.path).read()
    # WHEN it would advance it, THEN the write is refused and the file stays as it was
    writer = AnchorFile(anchor.path)
    with pytest.raises(OSError, match="newer arrowgate.*format 2"):
        writer.write(AnchorState(Anchor(1, "a" * 64), Anchor(2, "b" * 64)))
    writer.close()
    assert anchor.path.read_bytes() == newer


async def test_a_store_whose_anchor_a_newer_engine_wrote_is_refused(
        store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The engine refuses to open it and log verify to judge it, naming the version; the
    anchor keeps every byte."""
    # GIVEN a store with a log, whose anchor a newer engine then wrote in its format
    engine = open_store(store)
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.meter", {"usage.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.meter"},
                          workspace="w1")
    assert (await engine.call("c1", "usage.get")).outcome == "ok"
    path = engine.store.anchor.path
    engine.close()
    newer = _as_format_2(path)
    # WHEN this engine opens the store, THEN it is refused naming the anchor's version
    with pytest.raises(StoreFailed, match="newer arrowgate.*format 2") as raised:
        open_store(store).close()
    assert raised.value.reason == "schema-mismatch"
    # AND log verify refuses to judge it (exit 2), and log show to read it, naming it
    where = ["--store", store] if store.startswith("postgresql://") else ["--db", store]
    for verb in ("verify", "show"):
        assert main(["log", verb, *where]) == 2, verb
        assert "format 2" in capsys.readouterr().err, verb
    # AND arrowgate upgrade does not call it up to date
    if not store.startswith("postgresql://"):
        assert main(["upgrade", "--db", store]) == 2
        assert "format 2" in capsys.readouterr().err
    # AND the newer engine's anchor was not written over
    assert path.read_bytes() == newer
