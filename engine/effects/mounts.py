"""Where a file lies on the filesystem it is on, by this process's mount table (Linux's
``/proc/self/mountinfo``): which mount it is reached through, and its path within that
mount's filesystem.

A bind mount shows a folder of one filesystem at a second place: ``/tmp/x`` may be the
app's data folder's ``trash/``. Nothing above ``/tmp/x`` is the data folder, so the
folders a path lies in (`engine.effects.sameness.lineage`) cannot tell; the mount table
can. Each mount names its filesystem (``major:minor``) and the folder of it mounted
(its root, a path within that filesystem), and the kernel says which mount an open
file was reached through (``mnt_id`` in ``/proc/self/fdinfo``): the mount's root,
joined with the file's path below the mount point, is where the file lies on its
filesystem, however it was reached.

Where the table or an open file's mount cannot be read (not Linux, ``/proc`` not
mounted or hidden), nothing is told (None): callers judge by the device and inode
alone, as before there was this module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["Mount", "Place", "mount_id", "place", "place_at", "shown_at", "table", "unescape",
           "within"]

#: Where the kernel lists this process's mounts (Linux).
_MOUNTINFO = "/proc/self/mountinfo"
#: Where the kernel names this process's open files, and says what each is (Linux).
_FD_NAMES = "/proc/self/fd"
_FD_INFO = "/proc/self/fdinfo"
# How mountinfo writes a space, tab, newline or backslash in a path (``\040``).
_ESCAPED = re.compile(r"\\([0-7]{3})")
# The mount an open file was reached through, in its fdinfo (Linux 3.15+).
_MNT_ID = re.compile(r"^mnt_id:\s*(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of the mount table."""

    id: int
    #: The filesystem, as ``major:minor``.
    device: str
    #: The folder of the filesystem mounted: a path within it (``/`` for the whole).
    root: str
    #: Where it is mounted, in this process's view.
    point: str
    #: The filesystem's type (``ext4``, ``proc``, ...).
    fstype: str


@dataclass(frozen=True, slots=True)
class Place:
    """Where a file lies: its filesystem (``major:minor``) and its path within it."""

    device: str
    path: PurePosixPath


def unescape(field: str) -> str:
    """A mountinfo path field as the path it is: ``\\040`` a space, ``\\011`` a tab,
    ``\\012`` a newline, ``\\134`` a backslash."""
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 8)), field)


def table() -> list[Mount] | None:
    """This process's mounts, in the order they were made; None when the table cannot
    be read."""
    try:
        with open(_MOUNTINFO, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read(1 << 20).splitlines()
    except OSError:
        return None
    mounts = []
    for line in lines:
        # id, parent, major:minor, root, mount point, options, optional fields...,
        # ``-``, type, source, super options.
        head, sep, tail = line.partition(" - ")
        fields, after = head.split(), tail.split()
        if sep and len(fields) > 4 and after and fields[0].isdigit():
            mounts.append(Mount(int(fields[0]), fields[2], unescape(fields[3]),
                                unescape(fields[4]), after[0]))
    return mounts


def mount_id(fd: int) -> int | None:
    """The id of the mount the open ``fd`` was reached through; None when not told."""
    # os.open and one os.read: three system calls, where open() takes seven (fstat,
    # ioctl, lseek, a second read) — asked up to three times a file call. The kernel
    # writes the whole of a descriptor's fdinfo (a few short lines) in one read.
    try:
        info = os.open(f"{_FD_INFO}/{fd}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        text = os.read(info, 4096)
    except OSError:
        return None
    finally:
        os.close(info)
    found = _MNT_ID.search(text.decode("ascii", "replace"))
    return int(found.group(1)) if found else None


def place(fd: int, mounts: Sequence[Mount] | None) -> Place | None:
    """Where the open ``fd`` lies on its filesystem: the root of the mount it was reached
    through joined with its path below that mount's point (the kernel's own name for
    it); None when that cannot be told (no table, no fdinfo, a name that is no path)."""
    if mounts is None:
        return None
    found = mount_id(fd)
    mount = next((m for m in mounts if m.id == found), None)
    try:
        named = PurePosixPath(os.readlink(f"{_FD_NAMES}/{fd}"))
    except OSError:
        return None
    if mount is None or not named.is_absolute():
        return None
    try:
        below = named.relative_to(mount.point)
    except ValueError:  # named from outside this process's root (a chroot's)
        return None
    return Place(mount.device, PurePosixPath(mount.root, below))


def place_at(path: Path, mounts: Sequence[Mount] | None) -> Place | None:
    """Where ``path`` lies on its filesystem, links followed (`place`): as far as it
    exists, the names beyond that added as they are (a file not made yet lies where
    its folder does); None when that cannot be told."""
    if mounts is None:
        return None
    missing: list[str] = []
    here = path
    while True:
        try:
            fd = os.open(here, os.O_PATH | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            if here.parent == here:
                return None
            missing.insert(0, here.name)
            here = here.parent
            continue
        except OSError:
            return None
        try:
            found = place(fd, mounts)
        finally:
            os.close(fd)
        if found is None:
            return None
        return Place(found.device, found.path.joinpath(*missing))


def within(inner: Place | None, outer: Place | None) -> bool:
    """Whether ``inner`` is ``outer`` or lies in it, on one filesystem; False when either
    cannot be told."""
    if inner is None or outer is None or inner.device != outer.device:
        return False
    return inner.path == outer.path or outer.path in inner.path.parents


def shown_at(found: Place | None, mounts: Sequence[Mount] | None) -> list[PurePosixPath]:
    """Every path in this process's view at which ``found`` shows: through each mount of
    its filesystem whose root holds it (a bind mount shows it at one more place); none
    when that cannot be told."""
    if found is None or mounts is None:
        return []
    shown = []
    for mount in mounts:
        if mount.device == found.device and within(found, Place(found.device,
                                                                PurePosixPath(mount.root))):
            shown.append(PurePosixPath(mount.point,
                                       found.path.relative_to(PurePosixPath(mount.root))))
    return shown
