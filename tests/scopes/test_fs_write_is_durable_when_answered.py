"""A file write answered ``ok`` is on the disk: its bytes, and the name that holds them.

Rule (SPEC §8.3: writes are atomic — temporary file, fsync, rename): an ``ok``
answer and its log row say the write was done, so a power cut after them must
not undo it. The temporary file is flushed before its rename, and the folder
after it: until the folder is flushed, the rename itself may be lost, and the
file read back after a restart is the old one (or none), though the card was
told ``ok``.

(Found in round 25: the folder was never flushed after the rename.)
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def test_an_ok_write_flushed_its_folder_after_the_rename(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a card that writes a new file and then rewrites it, each flush recorded
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    flushed: list[tuple[bool, str]] = []
    fsync = os.fsync

    def recorded(fd: int) -> None:
        fsync(fd)
        folder = stat.S_ISDIR(os.fstat(fd).st_mode)
        flushed.append((folder, (ws / "sub" / "plan.txt").read_text() if folder else ""))

    monkeypatch.setattr(os, "fsync", recorded)
    for text in ("first", "second"):
        # WHEN the write is answered ok
        flushed.clear()
        done = await engine.call("c1", "fs.writeText", None,
                                 {"path": "sub/plan.txt", "text": text})
        assert done.outcome == "ok", done
        # THEN the folder holding it was flushed once the new file had its name
        assert (True, text) in flushed, f"the folder was not flushed after the rename: {flushed}"
