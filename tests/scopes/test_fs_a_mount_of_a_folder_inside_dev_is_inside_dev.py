"""A workspace that is a bind mount of a folder inside ``/dev`` (``/dev/shm/x``, on a
tmpfs of its own) is inside ``/dev``, as that folder given by its own path is: every file
call is ``workspace-unsafe``. A bind mount of an ordinary folder stays a workspace.

Rule (SPEC §8.3): "A workspace folder on a special system filesystem (proc, sysfs,
devtmpfs, debugfs and the like) or inside ``/proc``, ``/sys`` or ``/dev`` is unsafe";
and whether a folder lies there is told by what it is, not by how it is reached
(README, round 33). Decided in round 35: ``/dev/shm`` is a tmpfs, ordinary storage,
but the rule names the tree, and ``/dev/shm/x`` by its own path was refused while the
same folder bind-mounted at ``/tmp/ws`` was the card's (nothing above ``/tmp/ws`` is
``/dev``, and tmpfs is no special filesystem). The mount table tells: the folder's
filesystem is mounted at ``/dev/shm``, and the folder shows there inside ``/dev``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles

from ..bindmount import bound
from ..conftest import manifest, offer_install

CALLS: list[tuple[str, dict[str, str]]] = [
    ("fs.stat", {"path": "kept.md"}), ("fs.list", {"path": "."}),
    ("fs.readText", {"path": "kept.md"}), ("fs.writeText", {"path": "new.md", "text": "x"}),
    ("fs.mkdir", {"path": "new"}), ("fs.trash", {"path": "kept.md"}),
]


async def _card(make_engine: Any, tmp_path: Path, ws: Path) -> Any:
    """An engine whose card ``c1`` may write in workspace ``ws``."""
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(
        data_dir=tmp_path / "data", trash=tmp_path / "trash")))
    await offer_install(engine, manifest("acme.fs", {"fs.write": {}}))
    await engine.create_workspace("w1", ws)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


async def test_a_workspace_mounted_from_dev_shm_is_inside_dev(make_engine: Any,
                                                               tmp_path: Path) -> None:
    """Every call, reads too, is workspace-unsafe naming /dev; the folder is as it was."""
    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm here")
    # GIVEN a folder of /dev/shm mounted at another place, made a workspace
    inside = Path(tempfile.mkdtemp(prefix="arrowgate-ws-", dir="/dev/shm"))
    try:
        (inside / "kept.md").write_text("kept")
        with bound(inside, tmp_path / "ws") as ws:
            engine = await _card(make_engine, tmp_path, ws)
            # WHEN a card reads, lists, writes and trashes there
            for call, args in CALLS:
                d = await engine.call("c1", call, None, args)
                # THEN each is refused for the folder, as /dev/shm/x by its own path is
                assert (d.code, d.reason) == ("SCOPE_REFUSED", "workspace-unsafe"), (
                    call, d.message)
                assert "inside /dev" in d.message, d.message
            engine.close()
        # AND nothing in it changed
        assert sorted(p.name for p in inside.iterdir()) == ["kept.md"]
        assert (inside / "kept.md").read_text() == "kept"
    finally:
        shutil.rmtree(inside)


async def test_a_workspace_mounted_from_an_ordinary_folder_is_a_workspace(
        make_engine: Any, tmp_path: Path) -> None:
    """The mount alone refuses nothing: an ordinary folder bound elsewhere is read and
    written as any workspace."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "kept.md").write_text("kept")
    with bound(tmp_path / "real", tmp_path / "ws") as ws:
        engine = await _card(make_engine, tmp_path, ws)
        d = await engine.call("c1", "fs.readText", None, {"path": "kept.md"})
        assert d.outcome == "ok", d.message
        d = await engine.call("c1", "fs.writeText", None, {"path": "new.md", "text": "x"})
        assert d.outcome == "ok", d.message
        engine.close()
    assert (tmp_path / "real" / "new.md").read_text() == "x"
