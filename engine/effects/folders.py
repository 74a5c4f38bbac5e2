"""Which workspace folders are unsafe for file calls (SPEC §8.3).

A workspace folder is unsafe (every file call refused) when it is the home
folder, a filesystem root (``/``, or a filesystem mounted whole at the folder:
a drive's root), holds the app's data, lies inside ``/proc``,
``/sys`` or ``/dev``, or is on a special system filesystem (proc, sysfs,
devtmpfs, debugfs, ...), told by ``fstatfs``'s magic number and by the
filesystem type ``/proc/self/mountinfo`` gives for the folder's device. A folder
shown inside one of those trees by any mount of its filesystem (``/dev/shm/x``
bind-mounted at ``/tmp/ws``) lies inside it, however it was reached.
The home folder, the app's data and the system trees are told by what a folder is
(device and inode, `engine.effects.sameness`), so a spelling in another case (a
case-folding file system) or a bind mount is no way past them.
Which *names* are secret or protected needs no system call and stays in the
core (`engine.core.fsrules`).
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path, PurePosixPath

from engine.effects import mounts
from engine.effects.sameness import Ident, folded_within, holds, ident, identity, lineage

__all__ = ["MOVED", "mounted_whole", "opened_path", "special_filesystem", "unsafe_folder"]

# fstatfs magic numbers of special filesystems (linux/magic.h).
_SPECIAL_MAGIC = {
    0x9FA0: "proc", 0x62656572: "sysfs", 0x64626720: "debugfs", 0x74726163: "tracefs",
    0x73636673: "securityfs", 0x27E0EB: "cgroup", 0x63677270: "cgroup2",
    0x6165676C: "pstore", 0xCAFE4A11: "bpf", 0x62656570: "configfs", 0xDE5E81E4: "efivarfs",
    0x42494E4D: "binfmt_misc", 0x1CD1: "devpts", 0x19800202: "mqueue", 0x6E736673: "nsfs",
    0xF97CFF8C: "selinuxfs", 0x43415D53: "smackfs", 0x65735543: "fusectl",
    0x958458F6: "hugetlbfs", 0x0187: "autofs", 0x67596969: "rpc_pipefs",
}
# Filesystem types (as mountinfo names them) a workspace may never be on.
_SPECIAL_TYPES = frozenset(_SPECIAL_MAGIC.values()) | {"devtmpfs", "usbfs"}
_SYSTEM_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))
#: Where the kernel names this process's open files (Linux).
_FD_NAMES = "/proc/self/fd"
_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def special_filesystem(fd: int) -> str | None:
    """The name of the special filesystem the open folder ``fd`` is on, or None."""
    if _libc is not None:
        buf = ctypes.create_string_buffer(512)  # struct statfs is 120 bytes on 64-bit Linux
        if _libc.fstatfs(fd, buf) == 0:
            # f_type is the first member, a C long.
            magic = ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF
            if magic in _SPECIAL_MAGIC:
                return _SPECIAL_MAGIC[magic]
    want = _device(os.fstat(fd).st_dev)
    for mount in mounts.table() or []:
        if mount.device == want and mount.fstype in _SPECIAL_TYPES:
            return mount.fstype
    return None


def _device(dev: int) -> str:
    """A device number as mountinfo writes it (``major:minor``)."""
    return f"{os.major(dev)}:{os.minor(dev)}"


def mounted_whole(path: Path, fd: int) -> bool:
    """Whether the open folder ``fd``, at ``path``, is the root of a filesystem mounted
    there whole — a drive's root (``/media/usb``, ``/mnt/c``), not a folder of one
    bind-mounted there (a devcontainer's ``/workspaces/proj``).

    The mount table's last line for ``path`` (a later mount hides an earlier one) is
    for the folder's device, with the filesystem's own root (``/``) as its root.
    Without a mount table, a folder on another device than the folder above it is
    taken for one (it is a mount point; whether whole cannot be told).
    """
    st = os.fstat(fd)
    table = mounts.table()
    if table is None:
        try:
            above = os.stat("..", dir_fd=fd)
        except OSError:
            return True
        return above.st_dev != st.st_dev
    last = None
    for mount in table:
        if mount.point == str(path):
            last = mount
    return last is not None and last.device == _device(st.st_dev) and last.root == "/"


#: The verdict on a folder whose place cannot be told (`opened_path`): refused now, and
#: judged again at the next call (never remembered, as the others may be).
MOVED = "the workspace folder moved as it was judged: try again"


def opened_path(root: Path, root_fd: int) -> Path | None:
    """Where the folder ``root_fd`` (opened as ``root``) is, with no link in the way; None
    when that cannot be told (it was moved or replaced as it was looked at).

    The kernel's own name for the open folder where it gives one (``/proc``), not
    ``root`` resolved again: ``root`` may name another folder by now (a link
    retargeted, a folder renamed and another put in its place), and judging that
    one would pass the folder opened as something it is not. Either way the name
    is checked to lead to the very folder opened.
    """
    try:
        named = Path(os.readlink(f"{_FD_NAMES}/{root_fd}"))
    except OSError:  # no /proc here: the path, checked below
        named = root.resolve()
    try:
        found, opened = os.stat(named), os.fstat(root_fd)
    except OSError:
        return None
    if not named.is_absolute() or (found.st_dev, found.st_ino) != (opened.st_dev,
                                                                 opened.st_ino):
        return None
    return named


def unsafe_folder(root: Path, root_fd: int, held: tuple[Path, ...]) -> str | None:
    """Why the workspace folder opened as ``root_fd`` may not be used for file calls, or
    None; `MOVED` when where it is cannot be told (`opened_path`). ``held``: the app's
    own data (its data folder, its database file), which a workspace may not be or hold."""
    resolved = opened_path(root, root_fd)
    if resolved is None:
        return MOVED
    # Each folder compared by what it is (device and inode), not by its path's
    # spelling: on a case-folding file system ``/Users/Me`` is the home folder
    # ``/Users/me``, and a bind mount of it is too (`engine.effects.sameness`).
    here = ident(os.fstat(root_fd))
    if _is_home(resolved, here):
        return "the workspace folder is the home folder"
    if resolved.parent == resolved or mounted_whole(resolved, root_fd):
        return "the workspace folder is a filesystem root"
    # And by where each lies on its filesystem (`mounts`): the data folder may be a bind
    # mount of a folder the workspace holds by its own path, which no folder above the
    # data folder is. Without a mount table, the device and inode alone decide.
    table = mounts.table()
    place = mounts.place(root_fd, table)
    for data in held:
        if holds(resolved, here, data) or mounts.within(mounts.place_at(data, table), place):
            return "the workspace folder contains the app's own data"
    try:
        line: tuple[Ident, ...] | None = lineage(resolved)
    except OSError:
        line = None  # `holds` compares the names folded
    # And by where else its filesystem shows it (`mounts.shown_at`): a folder of the
    # tmpfs mounted at /dev/shm, bind-mounted at /tmp/ws, is the folder /dev/shm/x is,
    # which its own path puts inside /dev; nothing above /tmp/ws is /dev.
    shown = mounts.shown_at(place, table)
    for tree in _SYSTEM_TREES:
        if _in_tree(resolved, tree, line) or any(
                path == PurePosixPath(tree) or PurePosixPath(tree) in path.parents
                for path in shown):
            return f"the workspace folder is inside {tree}"
    kind = special_filesystem(root_fd)
    if kind is not None:
        return f"the workspace folder is on a special system filesystem ({kind})"
    return None


def _is_home(resolved: Path, here: Ident) -> bool:
    """Whether the folder at ``resolved`` ((device, inode) ``here``) is the home folder."""
    home = Path.home()
    if resolved == home.resolve():
        return True
    try:
        return identity(home) == here
    except OSError:
        return folded_within(resolved, home.resolve()) and folded_within(home.resolve(), resolved)


def _in_tree(resolved: Path, tree: Path, line: tuple[Ident, ...] | None) -> bool:
    """Whether the folder at ``resolved`` (its `lineage` ``line``, when told) is ``tree``
    or lies in it."""
    try:
        tree_id = identity(tree)
    except OSError:
        return folded_within(resolved, tree)
    return holds(tree, tree_id, resolved, line=line)
