"""The component walk agrees with the kernel's openat2(RESOLVE_BENEATH) on generated trees."""

from __future__ import annotations

import errno
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import World
from engine.effects.files import ConfinedFiles
from engine.effects.pathwalk import RESOLVE_BENEATH, Escape, has_openat2, openat2, walk

from ..conftest import manifest, offer_install

NAMES = ["a", "b", "c", "d", "e"]
TREES, PATHS_PER_TREE = 125, 100  # 12,500 cases


def _build(root: Path, rng: random.Random) -> None:
    """A small random tree of folders, files and relative and absolute links."""
    folders = [root]
    for _ in range(rng.randint(2, 6)):
        parent = rng.choice(folders)
        path = parent / rng.choice(NAMES)
        if not path.exists() and not path.is_symlink():
            path.mkdir()
            folders.append(path)
    for _ in range(rng.randint(2, 6)):
        path = rng.choice(folders) / rng.choice(NAMES)
        if not path.exists() and not path.is_symlink():
            path.write_text(str(path))
    for _ in range(rng.randint(2, 8)):
        path = rng.choice(folders) / rng.choice(NAMES)
        if path.exists() or path.is_symlink():
            continue
        kind = rng.random()
        if kind < 0.1:
            target = str(root / rng.choice(NAMES))  # absolute, even inside: refused
        else:
            target = "/".join(rng.choice(NAMES + ["..", "..", "."])
                              for _ in range(rng.randint(1, 4)))
        os.symlink(target, path)


def _walk_outcome(root_fd: int, path: str) -> object:
    try:
        walked = walk(root_fd, path.split("/"))
    except Escape:
        return "escape"
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    try:
        if not walked.exists:
            return "missing"
        if walked.name is None:
            st = os.fstat(walked.parent)
        else:
            st = os.stat(walked.name, dir_fd=walked.parent, follow_symlinks=False)
        return (st.st_dev, st.st_ino)
    finally:
        os.close(walked.parent)


def _kernel_outcome(root_fd: int, path: str) -> object:
    for _attempt in range(100):
        try:
            fd = openat2(root_fd, path, os.O_PATH, RESOLVE_BENEATH)
            break
        except BlockingIOError:
            # EAGAIN: the kernel saw a rename or mount somewhere on the system
            # during the lookup (openat2(2)); the answer is to ask again.
            continue
        except OSError as exc:
            return _kernel_error(exc)
    else:
        raise AssertionError(f"openat2 kept answering EAGAIN for {path!r}")
    try:
        st = os.fstat(fd)
        return (st.st_dev, st.st_ino)
    finally:
        os.close(fd)


def _kernel_error(exc: OSError) -> object:
    if exc.errno in (errno.EXDEV, errno.ELOOP):
        return "escape"
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return "missing"
    raise exc


@pytest.mark.skipif(not has_openat2(), reason="this kernel has no openat2")
def test_walk_matches_openat2(tmp_path: Path) -> None:
    """On 12,500 generated (tree, path) cases the walk and the kernel agree."""
    rng = random.Random(20261202)
    cases = disagreements = 0
    for t in range(TREES):
        root = tmp_path / f"t{t}" / "root"
        root.mkdir(parents=True)
        (root.parent / "outside").write_text("out")
        _build(root, rng)
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for _ in range(PATHS_PER_TREE):
                path = "/".join(rng.choice(NAMES + ["..", ".", "outside"])
                                for _ in range(rng.randint(1, 4)))
                cases += 1
                if _walk_outcome(root_fd, path) != _kernel_outcome(root_fd, path):
                    disagreements += 1
        finally:
            os.close(root_fd)
    assert cases >= 10_000
    assert disagreements == 0


@pytest.fixture
async def fs_engine(make_engine, tmp_path):
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "ok.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text("OUTSIDE-SECRET")
    os.symlink("../..", ws / "sub" / "up")
    os.symlink("sub", ws / "in")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    return engine


_ALPHABET = st.sampled_from(["a", "sub", "ok.txt", "up", "in", "..", ".", "/", "\\", "\0",
                             "secret.txt", "%2e", "\u2025", ":", "C:", "~", "ws", " "])


@settings(max_examples=3000, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(_ALPHABET, min_size=1, max_size=8))
async def test_fuzzed_paths_never_read_outside(fs_engine, pieces) -> None:
    """Whatever the path, nothing outside the workspace is returned and nothing crashes."""
    path = "".join(pieces)
    d = await fs_engine.call("c1", "fs.readText", None, {"path": path})
    assert d.code in (None, "SCOPE_REFUSED", "NOT_FOUND", "INVALID_ARGUMENT"), d.message
    assert "OUTSIDE-SECRET" not in str(d.value)
    if d.value is not None:
        assert d.value == "inside"


def test_a_folder_swapped_for_a_link_after_the_walk_is_refused(tmp_path: Path) -> None:
    """Between resolution and the open, a folder becomes a link out: the open is refused."""
    from engine.effects.pathwalk import open_beneath

    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f.txt").write_text("in")
    (tmp_path / "f.txt").write_text("OUT")
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        walked = walk(root_fd, ["sub", "f.txt"])
        os.close(walked.parent)
        # The swap: sub is now a link to the folder above the root.
        os.rename(root / "sub", root / "old")
        os.symlink("..", root / "sub")
        with pytest.raises(Escape):
            os.close(open_beneath(root_fd, (*walked.parts, walked.name), os.O_RDONLY))
    finally:
        os.close(root_fd)


@pytest.mark.parametrize("which", ["home", "root"])
async def test_home_and_root_workspaces_refuse_every_file_call(make_engine, tmp_path,
                                                               monkeypatch, which) -> None:
    """A workspace that is the home folder or a filesystem root refuses every file call."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    folder = home if which == "home" else Path("/")
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    d = await engine.call("c1", "fs.list", None, {"path": "."})
    assert (d.code, d.reason) == ("SCOPE_REFUSED", "workspace-unsafe")
