"""Resolving a relative path beneath an open directory, one component at a time.

`walk` opens every directory with ``O_NOFOLLOW`` relative to the one before
(holding one descriptor at a time) and reads symbolic links with
``readlinkat`` on the same directory, so a link that stays inside the root
works, one that leaves it (an absolute target, or ``..`` past the root) is
refused, loops end after 40 links, and a component swapped for a link
mid-walk fails its ``O_NOFOLLOW`` open. No string comparison of resolved
paths is involved.

Where the kernel has ``openat2`` (Linux 5.6+), `open_beneath` opens the
walk's result again with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``, so the
kernel itself guarantees the final open stays inside.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MAX_LINKS", "Escape", "Walked", "flush_folder", "has_openat2", "open_beneath",
           "openat2", "rename_noreplace", "walk", "walk_down"]

MAX_LINKS = 40
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437}.get(platform.machine())


class Escape(Exception):
    """The path leaves the root, loops, or changed under us; ``why`` says which."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass(frozen=True, slots=True)
class Walked:
    """Where a path led: the parent directory's fd, the real components, the last name.

    ``parts`` has no links and no ``..``; ``name`` is None when the path is the
    root itself, and ``exists`` is False when only the last component is missing.
    ``folders``: the (device, inode) of the root and of each folder of ``parts``, in
    order; ``found``: the last component's, when it exists (as the walk saw them: what
    each is, whatever its name's spelling). The caller closes ``parent``.
    """

    parent: int
    parts: tuple[str, ...]
    name: str | None
    exists: bool
    folders: tuple[tuple[int, int], ...]
    found: tuple[int, int] | None


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True) if _SYS_OPENAT2 else None


def openat2(dir_fd: int, path: str, flags: int, resolve: int, mode: int = 0) -> int:
    """The ``openat2`` system call; raises OSError like ``os.open``."""
    if _libc is None or _SYS_OPENAT2 is None:
        raise OSError(errno.ENOSYS, "openat2 is not available")
    # openat2 is strict: a mode without O_CREAT/O_TMPFILE is EINVAL.
    tmpfile = getattr(os, "O_TMPFILE", 0)  # includes O_DIRECTORY's bit: compare whole
    if not flags & os.O_CREAT and not (tmpfile and flags & tmpfile == tmpfile):
        mode = 0
    how = _OpenHow(flags | os.O_CLOEXEC, mode, resolve)
    fd = int(_libc.syscall(_SYS_OPENAT2, dir_fd, os.fsencode(path), ctypes.byref(how),
                           ctypes.sizeof(how)))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)
    return fd


_RENAME_NOREPLACE = 1


def flush_folder(fd: int) -> None:
    """Flush the open folder ``fd``: its entries (a name made, renamed in or out) on the disk.

    A new or moved name is on the disk only once its folder is: until then a power
    cut may undo a change a caller was told was done. A file system that cannot
    flush a folder (``EINVAL``, ``ENOTSUP``) is left as it is: nothing more can be done.
    """
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise


def rename_noreplace(src_dir_fd: int, src: str, dst_dir_fd: int, dst: str) -> None:
    """Rename ``src`` (in one open directory) to ``dst`` (in another), never replacing.

    ``renameat2(RENAME_NOREPLACE)`` where the C library has it; elsewhere a
    check before a plain rename (a narrow window, on old systems only).
    Neither name is followed if it is a link: the entry itself moves.

    Raises:
        FileExistsError: ``dst`` exists.
    """
    func = getattr(_libc, "renameat2", None) if _libc is not None else None
    if func is not None:
        if func(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst),
                _RENAME_NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EINVAL):  # EINVAL: a filesystem without the flag
            raise OSError(err, os.strerror(err), dst)
    try:
        os.stat(dst, dir_fd=dst_dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        os.rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        return
    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), dst)


def _probe() -> bool:
    try:
        fd = openat2(os.open("/", os.O_RDONLY | os.O_DIRECTORY), ".", os.O_RDONLY | os.O_DIRECTORY,
                     RESOLVE_BENEATH)
    except OSError:
        return False
    os.close(fd)
    return True


_HAS_OPENAT2 = _probe()


def has_openat2() -> bool:
    """True when this kernel has a working ``openat2``."""
    return _HAS_OPENAT2


def walk(root_fd: int, parts: list[str], *, follow_last: bool = True) -> Walked:
    """Resolve ``parts`` beneath ``root_fd``.

    One descriptor is held at a time, however deep the path (a path of 4,096 bytes
    may be 2,048 folders deep, and each descriptor held is one the rest of the
    process cannot open). A link's ``..`` opens the folder's ``..`` and checks
    that it is the very folder walked through (device and inode, remembered for
    each level): a folder moved elsewhere meanwhile is a change, never a way out.

    Raises:
        Escape: a link leads outside, there are too many links, or a
            component changed into a link (or moved) while we walked.
        FileNotFoundError: a component before the last is missing.
        NotADirectoryError: a component before the last is not a directory.
    """
    cur = os.dup(root_fd)
    real: list[str] = []
    st = os.fstat(cur)
    # (device, inode) of the root and of each folder of ``real``, in order.
    seen = [(st.st_dev, st.st_ino)]
    todo = list(reversed(parts))  # popped from the end: a link's target goes on top
    links = 0
    try:
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if not real:
                    raise Escape("a link leads outside the workspace")
                below, cur = cur, -1  # `_up` closes it, whatever happens
                cur = _up(below, seen[-2])
                real.pop()
                seen.pop()
                continue
            last = not todo
            try:
                st = os.stat(name, dir_fd=cur, follow_symlinks=False)
            except FileNotFoundError:
                if last:
                    found, cur = cur, -1
                    return Walked(found, tuple(real), name, False, tuple(seen), None)
                raise
            if stat.S_ISLNK(st.st_mode) and (follow_last or not last):
                links += 1
                if links > MAX_LINKS:
                    raise Escape("too many links (a link loop)")
                target = os.readlink(name, dir_fd=cur)
                if target.startswith("/"):
                    raise Escape("a link leads outside the workspace (absolute target)")
                todo.extend(reversed(target.split("/")))
                continue
            if last:
                found, cur = cur, -1
                return Walked(found, tuple(real), name, True, tuple(seen),
                              (st.st_dev, st.st_ino))
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", name)
            try:
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                             dir_fd=cur)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Escape("the path changed while it was resolved") from exc
                raise
            os.close(cur)
            cur = fd
            now = os.fstat(cur)
            real.append(name)
            seen.append((now.st_dev, now.st_ino))
        found, cur = cur, -1
        return Walked(found, tuple(real), None, True, tuple(seen), None)
    finally:
        if cur >= 0:
            os.close(cur)


def _up(cur: int, parent: tuple[int, int]) -> int:
    """The folder above ``cur`` (which is closed), when it is ``parent`` (device, inode).

    ``cur`` moved out of the folder it was walked into (renamed, trashed) has
    another folder above it now: that is a change, not a way up.
    """
    try:
        up = os.open("..", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=cur)
    finally:
        os.close(cur)
    st = os.fstat(up)
    if (st.st_dev, st.st_ino) != parent:
        os.close(up)
        raise Escape("the path changed while it was resolved")
    return up


def open_beneath(root_fd: int, parts: tuple[str, ...], flags: int, mode: int = 0o644) -> int:
    """Open a walked, link-free path: through ``openat2`` when available, else step by step.

    Raises:
        Escape: the kernel found a link or a way out (the tree changed).
    """
    if _HAS_OPENAT2:
        try:
            return openat2(root_fd, "/".join(parts) or ".", flags,
                           RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, mode)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.ELOOP):
                raise Escape("the path changed while it was resolved") from exc
            raise
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=fd)
            os.close(fd)
            fd = nxt
        if not parts:
            return os.dup(fd)
        try:
            return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Escape("the path changed while it was resolved") from exc
            raise
    finally:
        os.close(fd)


_SUBFOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def walk_down(top: int, parts: tuple[str, ...],
              visit: Callable[[int, tuple[str, ...]], list[str]], *, max_depth: int,
              too_deep: Callable[[], BaseException], skip_unopenable: bool = False) -> None:
    """Visit the open folder ``top`` (at ``parts``) and every real folder beneath it,
    depth first; ``top`` is taken over (closed by the walk).

    ``visit`` reads one open folder and returns the names of its subfolders, in
    the order they are to be visited last first (popped from the end). Each
    subfolder is opened with ``O_NOFOLLOW`` relative to its parent's descriptor
    (a link is never entered), and only one descriptor is held a level: a
    folder's subfolders are remembered by name until their turn, so a folder of
    thousands of them never uses up the process's descriptors.

    Args:
        max_depth: levels beneath ``top`` a folder may lie at and still be read
            past (each holds a descriptor while its subfolders are walked).
        too_deep: what is raised for a folder deeper than that with subfolders.
        skip_unopenable: a subfolder that cannot be opened (gone, or swapped for a
            link since it was listed) is passed by; else its `OSError` is raised.
    """
    stack: list[tuple[int, tuple[str, ...], list[str]]] = [(top, parts, [])]
    try:
        stack[-1][2].extend(visit(top, parts))
        while stack:
            fd, here, todo = stack[-1]
            if not todo:
                stack.pop()
                os.close(fd)
                continue
            if len(stack) > max_depth:
                raise too_deep()
            name = todo.pop()
            try:
                sub = os.open(name, _SUBFOLDER_FLAGS, dir_fd=fd)
            except OSError:
                if skip_unopenable:
                    continue
                raise
            stack.append((sub, (*here, name), []))
            stack[-1][2].extend(visit(sub, stack[-1][1]))
    finally:
        for fd, _here, _todo in stack:
            os.close(fd)
