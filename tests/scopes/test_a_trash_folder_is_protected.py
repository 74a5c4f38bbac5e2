"""A card may not write the desktop's trash: ``.Trash`` and ``.Trash-*`` are protected paths.

Rule: ``fs.write`` refuses ``.Trash/`` and ``.Trash-<anything>/`` anywhere in a path
(``protected-path``, any case), as it refuses other files that act on their own:
a ``.trashinfo`` file names where its item goes back to, so one a card wrote in a
workspace at the top of a filesystem (where ``$topdir/.Trash-$uid`` is that
filesystem's trash) would have a person's "Restore" in their file manager put the
card's file at any path it named — over ``~/.bashrc``, say. Reading them is not
refused (nothing there is secret by name).

(Found in round 21, by the helper that attacked the file effects.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine import Engine, World
from engine.effects.files import ConfinedFiles
from tests.conftest import manifest, offer_install


async def _engine(make_engine, tmp_path: Path) -> Engine:
    (tmp_path / "ws").mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


@pytest.mark.parametrize("path", [
    f".Trash-{os.getuid()}/info/bashrc.trashinfo", ".Trash-1000/files/x", ".Trash/1000/info/y",
    ".trash-0/info/z.trashinfo", "sub/.Trash-1000/info/w.trashinfo", ".TRASH"])
async def test_the_trash_is_refused_to_writes(make_engine, tmp_path: Path, path: str) -> None:
    engine = await _engine(make_engine, tmp_path)
    d = await engine.call("c1", "fs.writeText", None, {
        "path": path, "text": "[Trash Info]\nPath=/root/.bashrc\n"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), d.message
    assert not os.listdir(tmp_path / "ws")


async def test_names_that_only_start_alike_are_written(make_engine, tmp_path: Path) -> None:
    engine = await _engine(make_engine, tmp_path)
    for path in ("Trash", ".Trashy", "trash-notes.txt"):
        d = await engine.call("c1", "fs.writeText", None, {"path": path, "text": "x"})
        assert d.allowed, (path, d.message)


@pytest.mark.parametrize(("folder", "path"), [
    (".local/share", "Trash/info/bashrc.trashinfo"), (".local/share", "trash/files/x"),
    (".local", "share/Trash/info/y.trashinfo"), (".local/share/Trash", "info/z.trashinfo"),
    (".local/share/Trash/info", "w.trashinfo")])
async def test_the_home_trash_is_refused_to_writes(make_engine, tmp_path: Path, folder: str,
                                                   path: str) -> None:
    """The desktop's own trash, ``$XDG_DATA_HOME/Trash`` (``~/.local/share/Trash``), is
    the trash too: a workspace made of ``~/.local/share`` (or of the trash itself) may not
    have a card write a ``.trashinfo`` there, or put back an item a person trashed."""
    ws = tmp_path / "home" / folder
    ws.mkdir(parents=True)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    d = await engine.call("c1", "fs.writeText", None, {
        "path": path, "text": "[Trash Info]\nPath=/root/.bashrc\n"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), d.message
    assert not os.listdir(ws)


async def test_a_folder_holding_the_home_trash_is_not_trashed(make_engine, tmp_path: Path
                                                              ) -> None:
    """In a workspace made of ``~/.local``, ``share`` holds the home trash, a protected
    path, so it is not trashed (SPEC §8.3: a folder that contains a protected path
    cannot be); moved, the person's trashed items would go with it."""
    ws = tmp_path / "home" / ".local"
    (ws / "share" / "Trash" / "info").mkdir(parents=True)
    (ws / "share" / "Trash" / "info" / "a.trashinfo").write_text("[Trash Info]\n")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    d = await engine.call("c1", "fs.trash", None, {"path": "share"})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), d.message
    assert (ws / "share" / "Trash" / "info" / "a.trashinfo").is_file()
