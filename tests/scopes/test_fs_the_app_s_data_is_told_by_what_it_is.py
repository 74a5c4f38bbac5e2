"""The app's own data, the home folder and the system trees are told by what a folder
is (its device and inode), not by how its path is spelled.

Rule (SPEC §8.3): a workspace folder that is the home folder or contains the app's own
data (its data folder, its database file) is ``workspace-unsafe``; nothing in the data
folder is a card's to write or read (``protected-path``).

Found in round 33: each was a comparison of path strings. On a case-folding file
system (macOS's APFS, a Windows drive under WSL, FAT, SMB) ``~/.LOCAL/share`` or
``.../Arrowgate`` names the very folder ``~/.local/share`` or ``.../arrowgate`` does, and
a spelling in another case or Unicode form passed: a card wrote into the data folder.
This Linux cannot mount such a file system; a bind mount gives one folder a second
path just the same, and stands in for it here. Where what a folder is cannot be
looked at, names compare folded (case, NFC): refused, the safe mistake.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects import files, sameness
from engine.effects.files import ConfinedFiles

from ..bindmount import bound
from ..conftest import manifest, offer_install

CALLS: list[tuple[str, dict[str, str]]] = [
    ("fs.list", {"path": "."}), ("fs.readText", {"path": "kept.md"}),
    ("fs.writeText", {"path": "new.md", "text": "x"}),
]


async def _card(make_engine: Any, ws: Path, data: Path, database: Path | None = None,
                *more: Path) -> Any:
    """An engine whose card ``c1`` may write in workspace ``ws`` (and ``c2``, ``c3``, ...
    in each of ``more``)."""
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=data, database=database, trash=ws.parent / "trash")))
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    for n, folder in enumerate((ws, *more), 1):
        await engine.create_workspace(f"w{n}", folder)
        await engine.add_node({"id": f"c{n}", "type": "card", "package": "acme.fs"},
                              workspace=f"w{n}")
    return engine


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "xdg" / "arrowgate"
    data.mkdir(parents=True)
    (data / "kept.md").write_text("the app's")
    return data


@pytest.mark.parametrize("second", ["data folder", "folder holding it", "database's folder",
                                    "home folder"])
async def test_a_workspace_that_is_the_app_s_data_or_home_by_another_path_is_unsafe(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: str
        ) -> None:
    """A second path to the data folder, a folder holding it, the database's folder or
    the home folder: every call is workspace-unsafe, and nothing is written there."""
    # GIVEN a workspace folder that is, by another path, one of them
    data = _data(tmp_path)
    db_folder = tmp_path / "db"
    db_folder.mkdir()
    (db_folder / "kept.md").write_text("beside the database")
    (db_folder / "app.db").write_bytes(b"")
    home = tmp_path / "home"
    home.mkdir()
    (home / "kept.md").write_text("the person's")
    monkeypatch.setenv("HOME", str(home))
    real = {"data folder": data, "folder holding it": data.parent,
            "database's folder": db_folder, "home folder": home}[second]
    before = sorted(os.listdir(real))
    with bound(real, tmp_path / "second") as ws:
        engine = await _card(make_engine, ws, data, db_folder / "app.db")
        # WHEN a card lists, reads and writes there
        for call, args in CALLS:
            d = await engine.call("c1", call, None, args)
            # THEN each is refused for the folder
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "workspace-unsafe"), (call,
                                                                                 d.message)
        engine.close()
    assert sorted(os.listdir(real)) == before


async def test_the_data_folder_mounted_inside_a_workspace_is_the_app_s_data(
        make_engine: Any, tmp_path: Path) -> None:
    """In a workspace of its own, a path through a second mount of the data folder (or
    naming it) is protected-path, reads too; the rest of the workspace is the card's."""
    # GIVEN the data folder mounted again inside a workspace
    data = _data(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    with bound(data, ws / "mounted"):
        engine = await _card(make_engine, ws, data)
        # WHEN a card reads, lists and writes through it
        for call, args in (("fs.readText", {"path": "mounted/kept.md"}),
                           ("fs.list", {"path": "mounted"}),
                           ("fs.stat", {"path": "mounted"}),
                           ("fs.writeText", {"path": "mounted/new.md", "text": "x"}),
                           ("fs.mkdir", {"path": "mounted/new"})):
            d = await engine.call("c1", call, None, args)
            # THEN each is the app's own data
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (call,
                                                                               d.message)
            assert "'mounted" in d.message and "the app's own data" in d.message, d.message
        # AND beside it, the workspace is written as any
        w = await engine.call("c1", "fs.writeText", None, {"path": "mine.md", "text": "x"})
        assert w.allowed, w.message
        engine.close()
    assert not (data / "new.md").exists() and not (data / "new").exists()


def _spelled(data_home: Path, how: str) -> Path:
    """``data_home`` spelled otherwise: in capitals, or decomposed (NFD, as macOS keeps
    names)."""
    name = data_home.name.upper() if how == "case" else unicodedata.normalize(
        "NFD", data_home.name)
    assert name != data_home.name
    return data_home.with_name(name)


@pytest.mark.parametrize("how", ["case", "nfd"])
async def test_another_spelling_of_the_data_folder_is_another_folder_where_that_is_told(
        make_engine: Any, tmp_path: Path, how: str) -> None:
    """Here, a case-sensitive file system that keeps names as given, ``DONNÉES`` (or
    ``Données`` decomposed) beside ``Données`` is another folder: the device and inode
    say so, and a workspace holding it, or inside it, is the card's."""
    # GIVEN the data folder in "Données", and folders spelled otherwise beside it
    data_home = tmp_path / unicodedata.normalize("NFC", "Donn\u00e9es")
    data = data_home / "arrowgate"
    data.mkdir(parents=True)
    other = _spelled(data_home, how)
    (other / "arrowgate" / "demo").mkdir(parents=True)
    engine = await _card(make_engine, other, data, None, other / "arrowgate" / "demo")
    for card, path in (("c1", "arrowgate/x.md"), ("c2", "x.md")):
        # WHEN a card writes there
        d = await engine.call(card, "fs.writeText", None, {"path": path, "text": "x"})
        # THEN it is written
        assert d.allowed, (card, d.message)


@pytest.mark.parametrize("how", ["case", "nfd"])
async def test_another_spelling_of_the_data_folder_is_it_where_nothing_can_be_told(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
        ) -> None:
    """Where the data folder and the folders it lies in cannot be looked at (a folder
    on the way not searchable), names compare folded, as a case-folding file system
    compares them: a workspace holding ``DONNÉES/arrowgate`` is unsafe, one inside it
    is the app's data."""
    # GIVEN the data folder in "Données", folders spelled otherwise beside it, and
    # neither the data folder nor anything on its way able to be looked at
    data_home = tmp_path / unicodedata.normalize("NFC", "Donn\u00e9es")
    data = data_home / "arrowgate"
    data.mkdir(parents=True)
    other = _spelled(data_home, how)
    (other / "arrowgate" / "demo").mkdir(parents=True)
    real_lineage, real_identity = sameness.lineage, sameness.identity

    def lineage(path: Path) -> tuple[tuple[int, int], ...]:
        if data_home in (path, *path.parents):
            raise PermissionError(13, "Permission denied", str(path))
        return real_lineage(path)

    def identity(path: Path) -> tuple[int, int] | None:
        if data_home in (path, *path.parents):
            raise PermissionError(13, "Permission denied", str(path))
        return real_identity(path)

    monkeypatch.setattr(sameness, "lineage", lineage)
    monkeypatch.setattr(files, "identity", identity)
    engine = await _card(make_engine, other, data, None, other / "arrowgate" / "demo")
    for card, path, reason in (("c1", "arrowgate/x.md", "workspace-unsafe"),
                               ("c2", "x.md", "protected-path")):
        # WHEN a card writes there
        d = await engine.call(card, "fs.writeText", None, {"path": path, "text": "x"})
        # THEN it is refused, as the folder's or as the app's data
        assert (d.code, d.reason) == ("SCOPE_REFUSED", reason), (card, d.message)
    assert not (other / "arrowgate" / "x.md").exists()
    assert not (other / "arrowgate" / "demo" / "x.md").exists()
