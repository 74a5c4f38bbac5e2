"""The trash of another filesystem is looked for where the trashed entry is, never
where a link points.

Rule: when the user's trash is on another filesystem than the item, ``fs.trash``
uses the trash at the top of the item's own filesystem (freedesktop.org), found from
the folder the entry was opened in. A link is trashed as a link (SPEC §8.3): what it
names — anywhere, on any filesystem — is never read, made or written, and nothing
is created outside the workspace on its account.

(Found in round 23: the top folder was found from the item's path *resolved*, which
follows a trashed link to its target; for a link to another filesystem the "top"
was the target itself, and ``.Trash-UID/files`` and ``info`` — with every missing
folder above them — were made there, outside the workspace, before the trash was
refused for its device.)
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects import trashcan
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install

# A filesystem of its own for the user's trash and the link's target (tmpfs).
_OTHER = Path("/dev/shm")


@pytest.fixture
def elsewhere(tmp_path: Path) -> Any:
    if not _OTHER.is_dir() or os.stat(_OTHER).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on a filesystem of its own")
    folder = Path(tempfile.mkdtemp(prefix="arrowgate-trash-", dir=_OTHER))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_a_trashed_link_to_another_filesystem_makes_nothing_there(
        make_engine: Any, tmp_path: Path, elsewhere: Path, monkeypatch: Any) -> None:
    # The user's trash on another filesystem than the workspace: the item's own
    # filesystem's trash is looked for.
    monkeypatch.setenv("XDG_DATA_HOME", str(elsewhere / "xdg"))
    real_layout = trashcan.Trash._open_layout
    tried: list[Path] = []

    def layout(self: trashcan.Trash, folder: Path, dev: int, *, create: bool) -> Any:
        tried.append(folder)
        if elsewhere in folder.parents or tmp_path in folder.parents:
            return real_layout(self, folder, dev, create=create)
        # The machine's own top folder: refused here, so the test makes nothing there.
        raise trashcan.TrashRefused("trash-unavailable", "not in this test")

    monkeypatch.setattr(trashcan.Trash, "_open_layout", layout)
    (tmp_path / "ws").mkdir()
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    target = elsewhere / "victim" / "deep"
    os.symlink(target, tmp_path / "ws" / "away")

    d = await engine.call("c1", "fs.trash", None, {"path": "away"})

    assert not (elsewhere / "victim").exists(), sorted(map(str, (elsewhere / "victim").rglob("*")))
    assert all(target not in f.parents for f in tried), tried
    if d.outcome == "ok":
        assert not os.path.lexists(tmp_path / "ws" / "away")
    else:
        assert (d.code, d.reason) == ("SCOPE_REFUSED", "trash-unavailable"), d.message
        assert os.readlink(tmp_path / "ws" / "away") == str(target)
