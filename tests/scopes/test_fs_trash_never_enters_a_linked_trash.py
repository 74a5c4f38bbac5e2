"""A filesystem's own trash is used only as real folders: a ``.Trash-UID`` (or
``.Trash/UID``) that is a link is never followed.

Rule: ``fs.trash`` moves the item into the trash at the top of its filesystem when the
user's trash is on another one (freedesktop.org); that trash's folders are made and
opened one at a time without following links, so a link planted there (the workspace
may be its filesystem's top, and a cloned repository may hold any link) cannot send
the item, or its ``.trashinfo``, anywhere else. Such a trash is refused
(``trash-unavailable``) and the item left where it was.

(Found in round 23: the trash folders were made with ``mkdir(parents=True)`` and
opened with ``O_NOFOLLOW`` on their last name only, so a ``.Trash-UID`` link at the
top of the workspace's filesystem moved a card's file out of the workspace to
wherever the link pointed.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engine import World
from engine.effects import trashcan
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def test_a_linked_trash_at_the_top_is_not_entered(make_engine: Any, tmp_path: Path,
                                                       monkeypatch: Any) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # The user's trash cannot be made (a file stands where its folder would be) ...
    (tmp_path / "xdg").write_text("not a folder")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    # ... and the workspace is the top of its filesystem (a drive of its own).
    monkeypatch.setattr(trashcan, "_mount_top", lambda path, dev: ws)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink("../outside", ws / f".Trash-{os.getuid()}")
    os.symlink("../outside", ws / ".Trash")  # the shared form, for good measure
    (ws / "f.txt").write_text("mine")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")

    d = await engine.call("c1", "fs.trash", None, {"path": "f.txt"})

    assert sorted(p.name for p in outside.rglob("*")) == []
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "trash-unavailable"), d.message
    assert (ws / "f.txt").read_text() == "mine"


async def test_a_real_trash_at_the_top_is_made_and_used(make_engine: Any, tmp_path: Path,
                                                      monkeypatch: Any) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "xdg").write_text("not a folder")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(trashcan, "_mount_top", lambda path, dev: ws)
    (ws / "f.txt").write_text("mine")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")

    d = await engine.call("c1", "fs.trash", None, {"path": "f.txt"})

    assert d.outcome == "ok", d.message
    trash = ws / f".Trash-{os.getuid()}"
    assert (trash / "files" / "f.txt").read_text() == "mine"
    assert (trash / "info" / "f.txt.trashinfo").exists()
    assert (trash.stat().st_mode & 0o777) == 0o700
