"""A workspace folder swapped while a file call judges it is judged as the folder opened.

Rule: the folder a file call works in is the one judged safe. A file call opens
the workspace folder, then judges it (not the home folder, not a system tree, not
the app's data); if its path names another folder by the time it is judged (a
link retargeted, a folder renamed and another put in its place), what is judged
must still be the folder opened — else a path that named the home folder when
opened and a harmless folder when judged makes the home folder pass as safe, and
that verdict, remembered for that folder, lets every later call work in it.

(Found in round 25: the judgment resolved the path again instead of the folder
opened.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects import files, folders
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


@pytest.mark.parametrize("proc", [True, False], ids=["proc", "no-proc"])
async def test_a_folder_swapped_as_it_is_judged_is_judged_as_opened(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proc: bool) -> None:
    """Judged on the kernel's name for the folder opened, or (no ``/proc``) refused when
    the path no longer leads to it; never passed as the folder the path names now."""
    # GIVEN a workspace whose folder is a link, naming the home folder when a call
    # opens it, and a harmless folder when that call judges it
    home = tmp_path / "home"
    home.mkdir()
    harmless = tmp_path / "project"
    harmless.mkdir()
    monkeypatch.setenv("HOME", str(home))
    link = tmp_path / "ws"
    link.symlink_to(harmless)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", link)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    link.unlink()
    link.symlink_to(home)
    judge = files.unsafe_folder

    def swapped_as_judged(root: Path, root_fd: int, data_dir: Path | None) -> str | None:
        link.unlink()
        link.symlink_to(harmless)
        try:
            return judge(root, root_fd, data_dir)
        finally:
            link.unlink()
            link.symlink_to(home)

    monkeypatch.setattr(files, "unsafe_folder", swapped_as_judged)
    if not proc:
        monkeypatch.setattr(folders, "_FD_NAMES", str(tmp_path / "no-proc"))

    # WHEN a card writes, and writes again once the link stays on the home folder
    first = await engine.call("c1", "fs.writeText", None, {"path": "a.txt", "text": "x"})
    monkeypatch.setattr(files, "unsafe_folder", judge)
    again = await engine.call("c1", "fs.writeText", None, {"path": "b.txt", "text": "x"})

    # THEN the home folder was never written in
    assert (first.code, first.reason) == ("SCOPE_REFUSED", "workspace-unsafe"), first
    assert (again.code, again.reason) == ("SCOPE_REFUSED", "workspace-unsafe"), again
    assert sorted(os.listdir(home)) == []
