"""A workspace folder that is the root of a filesystem mounted there — a drive's root,
not only ``/`` — is unsafe; a project folder bind-mounted somewhere is not (SPEC §8.3).

Rule: "If the workspace folder is the user's home folder, a filesystem or drive root,
... every file call is refused (``workspace-unsafe``)." On Linux a drive's root is
where its filesystem is mounted (``/media/usb``, WSL's ``/mnt/c``, a tmpfs at
``/tmp``): its mount table line has the filesystem's own root (``/``) as the root of
the mount. A folder bind-mounted elsewhere (a devcontainer's ``/workspaces/proj``)
has the folder's path there instead, and is a project like any.

No test can mount a filesystem without privileges, so the mount table the engine
reads is this process's own with one line added, naming the test's folder as mounted.

(Found by files27: only ``/`` counted as a filesystem root.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects import folders, mounts
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

CALLS: list[tuple[str, dict[str, str]]] = [
    ("fs.stat", {}), ("fs.list", {}), ("fs.readText", {}), ("fs.readBytes", {}),
    ("fs.watch", {}), ("fs.writeText", {"text": "x"}), ("fs.writeBytes", {"base64": "eA=="}),
    ("fs.mkdir", {}), ("fs.trash", {}),
]


def _mounted(tmp_path: Path, folder: Path, root: str) -> Path:
    """This process's mount table, and ``folder`` mounted with ``root`` as its root."""
    dev = os.stat(folder).st_dev
    table = tmp_path / "mountinfo"
    point = str(folder).replace("\\", "\\134").replace(" ", "\\040")
    table.write_text(Path("/proc/self/mountinfo").read_text() +
                     f"999 27 {os.major(dev)}:{os.minor(dev)} {root} {point} rw,relatime "
                     "- ext4 /dev/sdz1 rw\n")
    return table


@pytest.mark.parametrize("name", ["usb", "my drive"])
async def test_a_filesystems_root_mounted_there_refuses_every_call(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The whole filesystem mounted at the folder: each call is workspace-unsafe."""
    # GIVEN a folder that is a drive's root (its filesystem mounted there, whole)
    drive = tmp_path / "media" / name
    (drive / "photos").mkdir(parents=True)
    (drive / "photos" / "a.txt").write_text("a")
    monkeypatch.setattr(mounts, "_MOUNTINFO", str(_mounted(tmp_path, drive, "/")),
                        raising=False)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data",
                                                                trash=tmp_path / "trash")))
    await engine.create_workspace("w1", drive)
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    # WHEN a card makes every file call in it
    for call, extra in CALLS:
        d = await engine.call("c1", call, None, {"path": "photos/a.txt", **extra})
        # THEN each is refused for the folder
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "workspace-unsafe"), (call, d.message)
        assert "root" in d.message
    assert (drive / "photos" / "a.txt").read_text() == "a"


async def test_a_folder_bind_mounted_there_is_a_project_like_any(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder of a filesystem mounted at another place (a bind mount) is not its root."""
    project = tmp_path / "workspaces" / "proj"
    project.mkdir(parents=True)
    (project / "a.txt").write_text("a")
    monkeypatch.setattr(mounts, "_MOUNTINFO",
                        str(_mounted(tmp_path, project, "/home/person/proj")), raising=False)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", project)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    assert (await engine.call("c1", "fs.readText", None, {"path": "a.txt"})).value == "a"


def test_without_a_mount_table_a_mount_point_is_taken_for_a_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No mount table to read: a folder on another device than the one above it (/proc
    here) is refused as a root, an ordinary folder is not."""
    monkeypatch.setattr(mounts, "_MOUNTINFO", str(tmp_path / "no-mountinfo"))
    for folder, whole in (("/proc", True), (str(tmp_path), False)):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert folders.mounted_whole(Path(folder), fd) is whole, folder
        finally:
            os.close(fd)
