"""A workspace that is a bind mount of a folder inside the app's data folder is in the
app's data; one that holds, on its filesystem, the folder a bind mount makes the data
folder, holds the app's data.

Rule (SPEC §8.3): a workspace folder that contains the app's own data folder is
``workspace-unsafe``; nothing in the data folder is a card's to read or write
(``protected-path``, as for a workspace inside it by its own path).

Found in round 34: the data folder's ``trash/`` mounted at ``/tmp/x`` and given as a
workspace was the card's: nothing above ``/tmp/x`` is the data folder, so the folders
it lies in (device and inode) could not tell. The mount table can: the mount's
filesystem is the data folder's, and its root, joined with the workspace's path
below the mount point, lies inside the data folder's path on that filesystem.
Where the table cannot be read, what the device and inode say is all there is.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects import mounts
from engine.effects.files import ConfinedFiles

from ..bindmount import bound
from ..conftest import manifest, offer_install

CALLS: list[tuple[str, dict[str, str]]] = [
    ("fs.readText", {"path": "kept.md"}), ("fs.list", {"path": "."}),
    ("fs.stat", {"path": "kept.md"}), ("fs.writeText", {"path": "new.md", "text": "x"}),
    ("fs.mkdir", {"path": "new"}), ("fs.trash", {"path": "kept.md"}),
]


async def _card(make_engine: Any, data: Path, ws: Path, *more: Path) -> Any:
    """An engine whose card ``c1`` may write in workspace ``ws`` (and ``c2`` in the next
    of ``more``, ...); ``data`` the app's data folder."""
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=data, trash=ws.parent / "trash")))
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    for n, folder in enumerate((ws, *more), 1):
        await engine.create_workspace(f"w{n}", folder)
        await engine.add_node({"id": f"c{n}", "type": "card", "package": "acme.fs"},
                              workspace=f"w{n}")
    return engine


@pytest.mark.parametrize("inside", ["trash", "a/b", "with space/and\ttab"])
async def test_a_workspace_mounted_from_inside_the_data_folder_is_the_app_s_data(
        make_engine: Any, tmp_path: Path, inside: str) -> None:
    """Every call, reads too, is protected-path, naming the path and the app's data; the
    folder is as it was. (Names with a space and a tab: mountinfo writes them escaped.)"""
    # GIVEN a folder of the data folder mounted at another place, made a workspace
    data = tmp_path / "xdg" / "arrowgate"
    (data / inside).mkdir(parents=True)
    (data / inside / "kept.md").write_text("the app's")
    with bound(data / inside, tmp_path / "mount point") as ws:
        engine = await _card(make_engine, data, ws)
        # WHEN a card reads, lists, writes and trashes there
        for call, args in CALLS:
            d = await engine.call("c1", call, None, args)
            # THEN each is refused as the app's own data
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), (call, d.message)
            assert f"'{args['path']}" in d.message and "the app's own data" in d.message, (
                d.message)
        engine.close()
    assert sorted(os.listdir(data / inside)) == ["kept.md"]


async def test_a_folder_of_the_data_folder_mounted_over_a_workspace_judged_is_its_data(
        make_engine: Any, tmp_path: Path) -> None:
    """A workspace written in, and then the data folder's ``trash/`` mounted over its
    folder: the next call is judged on what the folder is now, protected-path."""
    # GIVEN a workspace whose folder was judged and written in
    data = tmp_path / "xdg" / "arrowgate"
    (data / "trash").mkdir(parents=True)
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = await _card(make_engine, data, ws)
    first = await engine.call("c1", "fs.writeText", None, {"path": "a.md", "text": "x"})
    assert first.allowed, first.message
    # AND then the data folder's trash/ mounted over it
    with bound(data / "trash", ws):
        # WHEN a card writes there again
        d = await engine.call("c1", "fs.writeText", None, {"path": "b.md", "text": "x"})
        # THEN it is refused as the app's own data
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "protected-path"), d.message
        engine.close()
    assert os.listdir(data / "trash") == []


async def test_a_workspace_holding_the_data_folder_s_source_holds_the_app_s_data(
        make_engine: Any, tmp_path: Path) -> None:
    """The data folder a bind mount of another folder: a workspace holding that folder
    by its own path is workspace-unsafe, as one holding the data folder is."""
    # GIVEN the data folder mounted from a folder elsewhere, and a workspace holding it
    source = tmp_path / "disk" / "agdata"
    source.mkdir(parents=True)
    (source / "kept.md").write_text("the app's")
    with bound(source, tmp_path / "xdg" / "arrowgate") as data:
        engine = await _card(make_engine, data, tmp_path / "disk")
        # WHEN a card reads and writes there
        for call, args in (("fs.readText", {"path": "agdata/kept.md"}),
                           ("fs.writeText", {"path": "x.md", "text": "x"})):
            d = await engine.call("c1", call, None, args)
            # THEN each is refused for the folder
            assert (d.code, d.reason) == ("SCOPE_REFUSED", "workspace-unsafe"), (call,
                                                                                 d.message)
            assert "contains the app's own data" in d.message, d.message
        engine.close()
    assert not (tmp_path / "disk" / "x.md").exists()


async def test_without_a_mount_table_the_device_and_inode_alone_decide(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No mount table to read (not Linux, /proc hidden): a mount of the data folder's
    ``trash/`` cannot be told from any folder, and is a workspace like any — what was
    done before the table was read; the data folder itself by another path still is
    the app's."""
    # GIVEN no mount table, and workspaces mounted from the data folder's trash/ and
    # from the data folder
    data = tmp_path / "xdg" / "arrowgate"
    (data / "trash").mkdir(parents=True)
    monkeypatch.setattr(mounts, "_MOUNTINFO", str(tmp_path / "no-mountinfo"))
    with bound(data / "trash", tmp_path / "x") as trash, bound(data, tmp_path / "y") as whole:
        engine = await _card(make_engine, data, trash, whole)
        for card, reason in (("c1", None), ("c2", "workspace-unsafe")):
            # WHEN a card writes in each
            d = await engine.call(card, "fs.writeText", None, {"path": "new.md", "text": "x"})
            # THEN the first is written, the second refused for the folder
            assert d.reason == reason, (card, d.message)
        engine.close()
