"""Resolving a path holds a few file descriptors, however deep the path goes.

Rule: `engine.effects.pathwalk.walk` holds at most a couple of descriptors at a
time whatever the depth of the path (a path of 4,096 bytes may be 2,048 folders
deep), as the trash scan and the watch walk hold one a level only to a bound: the
process's descriptors are every other open's (the store, sockets, other calls).
A link's ``..`` still goes back up inside the folder, never past it.

(Found in round 21: the walk kept every folder of the path open until it ended, so
one call on a path 2,000 folders deep held 2,000 descriptors — past a common limit
of 1,024, a refusal ``os-error`` for it and EMFILE for whatever else opened a file
meanwhile; four file threads held four times as many.)
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import World
from engine.effects.files import ConfinedFiles
from engine.effects.pathwalk import Escape, walk

from ..conftest import manifest, offer_install

_DEPTH = 300


@pytest.fixture
def few_descriptors() -> Iterator[None]:
    """The process may open only 100 more descriptors than it holds now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 100, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _deep(ws: Path) -> Path:
    deep = ws.joinpath(*["d"] * _DEPTH)
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("deep")
    (deep / "sibling").mkdir()
    (deep / "sibling" / "g.txt").write_text("beside")
    return deep


async def test_a_deep_path_is_read_within_a_few_descriptors(make_engine: Any, tmp_path: Path,
                                                            few_descriptors: None) -> None:
    ws = tmp_path / "ws"
    _deep(ws)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    d = await engine.call("c1", "fs.readText", None, {"path": "d/" * _DEPTH + "f.txt"})
    assert d.outcome == "ok", d.message
    assert d.value == "deep"


def test_a_links_dotdot_deep_down_stays_inside(tmp_path: Path, few_descriptors: None) -> None:
    ws = tmp_path / "ws"
    deep = _deep(ws)
    os.symlink("../sibling/g.txt", deep / "sibling" / "up")
    os.symlink("../" * (_DEPTH + 1) + "outside", deep / "out")
    root = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        walked = walk(root, ["d"] * _DEPTH + ["sibling", "up"])
        try:
            assert walked.parts == ("d",) * _DEPTH + ("sibling",)
            assert (walked.name, walked.exists) == ("g.txt", True)
            with os.fdopen(os.open(walked.name, os.O_RDONLY, dir_fd=walked.parent)) as fh:
                assert fh.read() == "beside"
        finally:
            os.close(walked.parent)
        with pytest.raises(Escape):
            walk(root, ["d"] * _DEPTH + ["out"])
        opened = len(os.listdir("/proc/self/fd"))
        os.close(walk(root, ["d"] * _DEPTH + ["sibling", "up"]).parent)
        assert len(os.listdir("/proc/self/fd")) == opened, "the walk left a descriptor open"
    finally:
        os.close(root)


def test_a_folder_moved_out_meanwhile_is_no_way_up(tmp_path: Path) -> None:
    """``..`` of a folder moved out of the workspace (trashed) after it was walked into
    is not the folder walked through: the walk refuses rather than go up there."""
    from engine.effects.pathwalk import _up

    (tmp_path / "ws" / "a" / "b").mkdir(parents=True)
    (tmp_path / "away").mkdir()
    a = os.stat(tmp_path / "ws" / "a")
    fd = os.open(tmp_path / "ws" / "a" / "b", os.O_RDONLY | os.O_DIRECTORY)
    os.rename(tmp_path / "ws" / "a" / "b", tmp_path / "away" / "b")
    with pytest.raises(Escape):
        _up(fd, (a.st_dev, a.st_ino))
    fd = os.open(tmp_path / "ws" / "a", os.O_RDONLY | os.O_DIRECTORY)
    ws = os.stat(tmp_path / "ws")
    up = _up(fd, (ws.st_dev, ws.st_ino))  # where it was walked from: the way up
    assert os.fstat(up).st_ino == ws.st_ino
    os.close(up)
