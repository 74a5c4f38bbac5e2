"""A folder made, or an item trashed, answered ``ok`` stays so after a power cut.

Rule (SPEC §8.3, as for writes): an ``ok`` answer and its log row say the call was
done. A new name in a folder (``fs.mkdir``), or a name moved out of one into the
trash (``fs.trash``), is on the disk only once the folders holding those names are
flushed: until then a power cut may undo it, and the folder made is gone, or the
file trashed is back, though the card was told ``ok``. So each folder whose
entries the call changed is flushed before the answer, after the change (and a
trashed item's ``.trashinfo``, which says where it came from, with it).

(Found in round 25: writes flushed their folder, ``fs.mkdir`` and ``fs.trash`` did not.)
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


def _record_folder_flushes(monkeypatch: pytest.MonkeyPatch, seen: Callable[[], Any]
                           ) -> list[tuple[int, Any]]:
    """Each flush of a folder from now on, as (its inode, what ``seen()`` said then)."""
    flushed: list[tuple[int, Any]] = []
    fsync = os.fsync

    def recorded(fd: int) -> None:
        fsync(fd)
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            flushed.append((st.st_ino, seen()))

    monkeypatch.setattr(os, "fsync", recorded)
    return flushed


async def _card(make_engine: Any, tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


async def test_an_ok_mkdir_flushed_the_folder_it_was_made_in(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fs.mkdir answered ok: the parent folder was flushed once the new folder was in it."""
    # GIVEN a card allowed fs.write, each flush of a folder recorded
    engine = await _card(make_engine, tmp_path)
    made = tmp_path / "ws" / "sub" / "new"
    flushed = _record_folder_flushes(monkeypatch, made.is_dir)

    # WHEN it makes a folder, answered ok
    done = await engine.call("c1", "fs.mkdir", None, {"path": "sub/new"})
    assert done.outcome == "ok", done

    # THEN the folder holding it was flushed after it was made
    parent = (tmp_path / "ws" / "sub").stat().st_ino
    assert (parent, True) in flushed, f"the folder was not flushed after the mkdir: {flushed}"


async def test_an_ok_trash_flushed_the_folder_it_left_and_the_trash_it_entered(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fs.trash answered ok: the folder it left and the trash's files folder were flushed
    after the move, and the trash's info folder once its .trashinfo was written."""
    # GIVEN a card allowed fs.write and a file to trash, each flush of a folder recorded
    engine = await _card(make_engine, tmp_path)
    old = tmp_path / "ws" / "sub" / "old.txt"
    old.write_text("draft")
    trash = tmp_path / "trash"

    def seen() -> tuple[bool, bool, bool]:
        return (old.exists(), (trash / "files" / "old.txt").exists(),
                (trash / "info" / "old.txt.trashinfo").exists())

    flushed = _record_folder_flushes(monkeypatch, seen)

    # WHEN it trashes the file, answered ok
    done = await engine.call("c1", "fs.trash", None, {"path": "sub/old.txt"})
    assert done.outcome == "ok", done

    # THEN the folder it left, the trash's files and its info were flushed after the move
    moved = (False, True, True)
    for folder in (tmp_path / "ws" / "sub", trash / "files", trash / "info"):
        assert (folder.stat().st_ino, moved) in flushed, \
            f"{folder.name} was not flushed after the move: {flushed}"
