"""The mount table as `engine.effects.mounts` reads it, and where an open folder lies on
its filesystem: mountinfo's fields with their octal escapes undone (a space is
``\\040``), optional fields passed over, lines it cannot read left out; nothing told
where the table or a file's mount cannot be read."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from engine.effects import mounts
from engine.effects.mounts import Mount, Place

from ..bindmount import bound

TABLE = (
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "35 22 8:1 /srv/my\\040data/tab\\011and\\134slash /mnt/a\\040b rw master:2 - ext4 "
    "/dev/sda1 rw\n"
    "not a mount line\n"
    "36 22 0:5 / /proc rw - proc proc rw\n"
)


def test_the_table_is_read_with_its_escapes_undone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root and mount point unescaped, optional fields passed over, a bad line left out."""
    # GIVEN a table with escaped names and a line that is no mount
    (tmp_path / "mountinfo").write_text(TABLE)
    monkeypatch.setattr(mounts, "_MOUNTINFO", str(tmp_path / "mountinfo"))
    # WHEN it is read THEN each mount is as the kernel meant it
    assert mounts.table() == [
        Mount(22, "8:1", "/", "/", "ext4"),
        Mount(35, "8:1", "/srv/my data/tab\tand\\slash", "/mnt/a b", "ext4"),
        Mount(36, "0:5", "/", "/proc", "proc"),
    ]


def test_no_table_tells_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No table (not Linux, /proc hidden): no place, and nothing lies within anything."""
    monkeypatch.setattr(mounts, "_MOUNTINFO", str(tmp_path / "none"))
    assert mounts.table() is None
    assert mounts.place_at(tmp_path, None) is None
    assert not mounts.within(None, Place("8:1", PurePosixPath("/")))


@pytest.mark.parametrize(("inner", "outer", "within"), [
    (("8:1", "/a/b"), ("8:1", "/a"), True), (("8:1", "/a"), ("8:1", "/a"), True),
    (("8:1", "/ab"), ("8:1", "/a"), False), (("8:1", "/a"), ("8:1", "/a/b"), False),
    (("8:2", "/a/b"), ("8:1", "/a"), False)])
def test_within_is_one_filesystem_and_a_whole_folder_name(
        inner: tuple[str, str], outer: tuple[str, str], within: bool) -> None:
    """Within: the same filesystem, and the folder itself or one of its whole names' below."""
    assert mounts.within(Place(inner[0], PurePosixPath(inner[1])),
                         Place(outer[0], PurePosixPath(outer[1]))) is within


def test_a_folder_mounted_elsewhere_lies_where_it_is_on_its_filesystem(
        tmp_path: Path) -> None:
    """Through a bind mount (its point with a space in it), a folder and a file not made
    yet lie where they do by their own path."""
    # GIVEN a folder mounted at a second place
    (tmp_path / "src" / "in side").mkdir(parents=True)
    with bound(tmp_path / "src", tmp_path / "a mount"):
        # WHEN where a path lies is asked by each place THEN it is one place
        table = mounts.table()
        here = mounts.place_at(tmp_path / "src" / "in side" / "new.md", table)
        there = mounts.place_at(tmp_path / "a mount" / "in side" / "new.md", table)
        assert here is not None and here == there
        fd = os.open(tmp_path / "a mount", os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert mounts.place(fd, table) == mounts.place_at(tmp_path / "src", table)
            assert mounts.place(fd, None) is None
        finally:
            os.close(fd)
