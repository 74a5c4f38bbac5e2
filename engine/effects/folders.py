"""Which workspace folders are unsafe for file calls (SPEC §8.3).

A workspace folder is unsafe (every file call refused) when it is the home
folder, a filesystem root, holds the app's data, lies inside ``/proc``,
``/sys`` or ``/dev``, or is on a special system filesystem (proc, sysfs,
devtmpfs, debugfs, ...), told by ``fstatfs``'s magic number and by the
filesystem type ``/proc/self/mountinfo`` gives for the folder's device.
Which *names* are secret or protected needs no system call and stays in the
core (`engine.core.fsrules`).
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

__all__ = ["special_filesystem", "unsafe_folder"]

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
    dev = os.fstat(fd).st_dev
    want = f"{os.major(dev)}:{os.minor(dev)}"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            lines = fh.read(1 << 20).splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 3 and fields[2] == want and " - " in line:
            fstype = line.split(" - ", 1)[1].split()[0]
            if fstype in _SPECIAL_TYPES:
                return fstype
    return None


def unsafe_folder(root: Path, root_fd: int, data_dir: Path | None) -> str | None:
    """Why the workspace folder may not be used for file calls, or None."""
    resolved = root.resolve()
    if resolved == Path.home().resolve():
        return "the workspace folder is the home folder"
    if resolved.parent == resolved:
        return "the workspace folder is a filesystem root"
    if data_dir is not None and (data_dir == resolved or resolved in data_dir.parents):
        return "the workspace folder contains the app's own data"
    for tree in _SYSTEM_TREES:
        if resolved == tree or tree in resolved.parents:
            return f"the workspace folder is inside {tree}"
    kind = special_filesystem(root_fd)
    if kind is not None:
        return f"the workspace folder is on a special system filesystem ({kind})"
    return None
