"""Scanning a folder before it is trashed holds a descriptor per level, not per folder.

Found in round 19: `scan_tree` opened every subfolder of a folder as soon as it
saw it and kept them all open until their turn, so ``fs.trash`` of a folder of
a few thousand empty subfolders held thousands of descriptors at once — past
the usual limit of 1024, every other open in the engine (the store, sockets)
then failed with EMFILE.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.effects.trashcan import MAX_DEPTH, TrashRefused, scan_tree


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_wide_folder_is_scanned_with_few_descriptors(tmp_path: Path) -> None:
    """A folder of 1,500 subfolders is scanned holding at most a few descriptors more."""
    # GIVEN a folder with 1,500 empty subfolders (one of them two deep)
    top = tmp_path / "wide"
    for i in range(1500):
        (top / f"d{i}").mkdir(parents=True)
    (top / "d7" / "deeper").mkdir()
    base = _open_descriptors()
    peak = base
    seen: list[str] = []

    def guarded(parts: list[str]) -> str | None:
        nonlocal peak
        seen.append("/".join(parts))
        if len(seen) % 50 == 0:
            peak = max(peak, _open_descriptors())
        return None

    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # WHEN it is scanned
        scan_tree(fd, ("wide",), guarded)
    finally:
        os.close(fd)
    # THEN every entry was looked at, and the scan never held more than a handful open
    assert len(seen) == 1501
    assert "wide/d7/deeper" in seen
    assert peak - base <= 8, f"{peak - base} descriptors open at once"
    assert _open_descriptors() == base


def test_a_tree_deeper_than_the_bound_is_refused_and_leaks_nothing(tmp_path: Path) -> None:
    """Folders more than MAX_DEPTH deep are too-large (a descriptor a level), all closed."""
    deep = tmp_path / "deep"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    level = os.dup(fd)
    for _ in range(MAX_DEPTH + 2):  # made by descriptor: the path would be too long
        os.mkdir("d", dir_fd=level)
        nxt = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=level)
        os.close(level)
        level = nxt
    os.close(level)
    base = _open_descriptors()
    try:
        with pytest.raises(TrashRefused) as refused:
            scan_tree(fd, ("deep",), lambda _parts: None)
    finally:
        os.close(fd)
    assert refused.value.reason == "too-large"
    assert _open_descriptors() == base - 1
