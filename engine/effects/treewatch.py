"""Watching a folder tree for changes without ever following a link (SPEC §8.3).

A recursive watch from a library walks the tree by path and follows links to
folders, so a link inside the workspace to ``/`` would add a watch on every
folder of the disk (using up the user's inotify watches) before any event is
filtered. Here the tree is walked as `engine.effects.pathwalk` walks paths:
the watched folder is opened beneath the workspace folder with no link
allowed, each subfolder with ``O_NOFOLLOW`` relative to its parent's
descriptor, and each is given to inotify through its own descriptor
(``/proc/self/fd/N`` names exactly the folder that was opened). A link is
an entry like a file: reported when it comes or goes, never entered.

Walking (which may meet thousands of folders) runs in a worker thread, one
descriptor a level, so at most `MAX_DEPTH` levels (deeper ends the watch);
events are read on the loop from a non-blocking inotify descriptor, a cheap
read. A folder that arrives later (made, or moved in) is walked the same way
and its entries are reported as added; a folder moved away is forgotten at
once, so nothing under it is reported again, wherever it went. The watched folder itself moved or removed ends the watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import enum
import errno
import functools
import os
import struct
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Executor
from pathlib import Path

from engine.effects.pathwalk import open_beneath, walk_down

__all__ = ["MAX_DEPTH", "MAX_FOLDERS", "Armed", "Change", "Overflowed", "TooDeep",
           "TooManyFolders", "arm", "watch_tree"]

#: Folders one watch may hold (an inotify watch each); more ends the watch.
MAX_FOLDERS = 10_000
#: Levels of folders beneath the watched one a watch goes down (its walk holds a
#: descriptor a level, as the trash scan does); deeper ends the watch.
MAX_DEPTH = 256

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED = 0x4000, 0x8000
_IN_ONLYDIR, _IN_EXCL_UNLINK, _IN_ISDIR = 0x01000000, 0x04000000, 0x40000000
# No IN_DONTFOLLOW: the path given is the /proc link to a descriptor we opened
# without following anything, which must be followed to reach that very folder.
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO
         | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
         | _IN_EXCL_UNLINK)
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len
_libc = ctypes.CDLL(None, use_errno=True)


class Change(enum.IntEnum):
    """What happened to an entry (``name`` is what a card is told)."""

    added = 1
    modified = 2
    deleted = 3


class TooManyFolders(Exception):
    """The watched tree holds more than `MAX_FOLDERS` folders."""

    def __init__(self) -> None:
        super().__init__(f"the folder holds more than {MAX_FOLDERS} folders to watch")


class Overflowed(Exception):  # noqa: N818 -- named as the watch's end reason reads
    """The kernel's queue of changes overflowed: some were lost, and which is unknown."""

    def __init__(self) -> None:
        super().__init__("more changes came than the kernel keeps: some were lost")


class TooDeep(Exception):  # noqa: N818 -- named as the watch's end reason reads
    """The watched tree has folders more than `MAX_DEPTH` levels beneath the watched one."""

    def __init__(self) -> None:
        super().__init__(f"the folder holds folders more than {MAX_DEPTH} levels deep")


def _check(result: int) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return result


class _Tree:
    """One inotify instance and the workspace-relative folder each of its watches is."""

    def __init__(self, root: Path, base: tuple[str, ...]) -> None:
        self.root = root
        #: The watched folder's parts: depth (`MAX_DEPTH`) counts from it.
        self.base = base
        self.fd = _check(_libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        #: Watch descriptor -> the folder's parts, beneath the workspace folder.
        self.folders: dict[int, tuple[str, ...]] = {}
        self.base_wd: int | None = None
        # A walk in a worker thread may outlive the watch (cancelled while it
        # walked): it must not add to a descriptor closed and perhaps reused.
        self._lock = threading.Lock()
        self._closed = False

    def close(self) -> None:
        """Close the inotify descriptor and its watches (again is nothing: the
        number may be another file's by then)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                os.close(self.fd)

    def walk(self, parts: tuple[str, ...], *, strict: bool
             ) -> tuple[list[tuple[int, tuple[str, ...]]], list[tuple[str, ...]]]:
        """Watch folder ``parts`` and every real folder beneath it (in a worker thread).

        Returns the new watches and every entry met beneath ``parts``. The
        loop adopts the watches (`adopt`): this never touches ``folders``.
        With ``strict`` (the watched folder itself) failing to open it raises;
        otherwise a folder gone or turned into a link meanwhile is skipped.

        Raises:
            TooManyFolders: the watch would hold more than `MAX_FOLDERS` folders.
            TooDeep: a folder lies more than `MAX_DEPTH` levels beneath the
                watched one (the walk holds a descriptor for each level above it:
                unbounded, they would use up the engine's descriptors).
        """
        watched: list[tuple[int, tuple[str, ...]]] = []
        entries: list[tuple[str, ...]] = []
        root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            try:
                top = open_beneath(root_fd, parts, os.O_RDONLY | os.O_DIRECTORY)
            except Exception:
                if strict:
                    raise
                return watched, entries
        finally:
            os.close(root_fd)
        try:
            # A subfolder gone, or swapped for a link, is passed by: its parent's
            # events say so. Depth counts from the watched folder, not from ``parts``.
            walk_down(top, parts,
                      lambda fd, here: self._watch_one(fd, here, watched, entries),
                      max_depth=MAX_DEPTH - (len(parts) - len(self.base)),
                      too_deep=TooDeep, skip_unopenable=True)
        except BaseException:
            with self._lock:
                # Closed meanwhile (the watch ended): its watches went with it, and
                # the number may be another watch's descriptor now — never touched.
                if not self._closed:
                    for wd, _parts in watched:
                        with contextlib.suppress(OSError):
                            _check(_libc.inotify_rm_watch(self.fd, wd))
            raise
        return watched, entries

    def _watch_one(self, fd: int, parts: tuple[str, ...],
                   watched: list[tuple[int, tuple[str, ...]]],
                   entries: list[tuple[str, ...]]) -> list[str]:
        """Watch one open folder (before reading it: nothing made meanwhile is missed)."""
        if len(self.folders) + len(watched) >= MAX_FOLDERS:
            raise TooManyFolders
        with self._lock:
            if self._closed:
                raise OSError(errno.EBADF, "the watch has ended")
            wd = _check(_libc.inotify_add_watch(self.fd, os.fsencode(f"/proc/self/fd/{fd}"),
                                                _MASK))
        watched.append((wd, parts))
        subs: list[str] = []
        with os.scandir(fd) as found:
            for entry in found:
                entries.append((*parts, entry.name))
                # The listing's own type where it has one; an entry removed since it
                # was listed is no folder (its removal is an event), never an error.
                if entry.is_dir(follow_symlinks=False):
                    subs.append(entry.name)
        return subs

    def adopt(self, watched: list[tuple[int, tuple[str, ...]]]) -> None:
        """Take a walk's watches as this tree's (on the loop)."""
        self.folders.update(watched)

    def forget(self, parts: tuple[str, ...]) -> None:
        """Stop watching ``parts`` and everything beneath it (it moved away)."""
        for wd, there in list(self.folders.items()):
            if there[:len(parts)] == parts:
                del self.folders[wd]
                with contextlib.suppress(OSError):
                    _check(_libc.inotify_rm_watch(self.fd, wd))

    def read(self) -> tuple[list[tuple[Change, tuple[str, ...]]], list[tuple[str, ...]], bool]:
        """Every event waiting: the changes, the folders that arrived, and whether
        the watched folder itself is gone (removed or moved).

        Raises:
            Overflowed: the kernel dropped changes.
        """
        changes: list[tuple[Change, tuple[str, ...]]] = []
        arrived: list[tuple[str, ...]] = []
        gone = False
        for wd, mask, name in self._events():
            if mask & _IN_Q_OVERFLOW:
                # Changes were dropped: going on would tell the card of later ones
                # as if it had seen them all. The watch ends; the card looks anew.
                raise Overflowed
            if wd == self.base_wd and mask & (_IN_IGNORED | _IN_MOVE_SELF | _IN_DELETE_SELF):
                gone = True
            if mask & _IN_IGNORED:
                self.folders.pop(wd, None)
                continue
            here = self.folders.get(wd)
            if here is None or not name:
                continue  # forgotten, or about the folder itself (its parent tells)
            parts = (*here, name)
            if mask & (_IN_CREATE | _IN_MOVED_TO):
                changes.append((Change.added, parts))
                if mask & _IN_ISDIR:
                    arrived.append(parts)
            elif mask & (_IN_DELETE | _IN_MOVED_FROM):
                changes.append((Change.deleted, parts))
                if mask & _IN_ISDIR and mask & _IN_MOVED_FROM:
                    self.forget(parts)
            elif mask & (_IN_MODIFY | _IN_CLOSE_WRITE | _IN_ATTRIB):
                changes.append((Change.modified, parts))
        return changes, arrived, gone

    def _events(self) -> Iterator[tuple[int, int, str]]:
        while True:
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            at = 0
            while at + _HEADER.size <= len(buf):
                wd, mask, _cookie, size = _HEADER.unpack_from(buf, at)
                raw = buf[at + _HEADER.size:at + _HEADER.size + size].split(b"\0", 1)[0]
                at += _HEADER.size + size
                yield wd, mask, os.fsdecode(raw)


def _coalesce(batch: list[tuple[Change, tuple[str, ...]]]
              ) -> list[tuple[Change, tuple[str, ...]]]:
    """One change per path for a batch, as seen from before it to after it: made and
    written is added, made and removed is nothing, removed and made again is modified."""
    net: dict[tuple[str, ...], Change | None] = {}
    for change, parts in batch:
        before = net.get(parts)  # None: not seen yet, or made and removed since
        if before is None:
            net[parts] = change
        elif before is Change.added:
            net[parts] = None if change is Change.deleted else Change.added
        elif before is Change.deleted:
            net[parts] = Change.deleted if change is Change.deleted else Change.modified
        else:
            net[parts] = change if change is Change.deleted else Change.modified
    return [(change, parts) for parts, change in net.items() if change is not None]


class Armed:
    """A folder tree walked and watched, its changes not yet read (`arm`).

    Every change from the moment `arm` returned is kept by the kernel until
    `watch_tree` reads it, so a caller may answer "watching" before it starts
    reading. Closed by `watch_tree` when it ends, or by `close`.
    """

    def __init__(self, tree: _Tree) -> None:
        self._tree = tree

    def close(self) -> None:
        """Stop watching (the descriptor and its watches go); closing twice is nothing."""
        self._tree.close()


async def arm(root: Path, base: tuple[str, ...], pool: Executor) -> Armed:
    """Watch folder ``base`` of the workspace folder ``root`` and every folder beneath
    it, walking in ``pool``.

    Raises:
        OSError: the folder cannot be opened or watched (no inotify instances left).
        TooManyFolders: the tree holds more than `MAX_FOLDERS` folders.
        TooDeep: the tree has folders more than `MAX_DEPTH` levels deep.
    """
    loop = asyncio.get_running_loop()
    tree = _Tree(root, base)
    try:
        watched, _entries = await loop.run_in_executor(
            pool, functools.partial(tree.walk, base, strict=True))
    except BaseException:
        tree.close()
        raise
    tree.adopt(watched)
    tree.base_wd = watched[0][0]
    return Armed(tree)


async def watch_tree(root: Path, base: tuple[str, ...], end: asyncio.Event, pool: Executor,
                     *, armed: Armed | None = None, debounce: float = 0.05, step: float = 0.02
                     ) -> AsyncIterator[list[tuple[Change, tuple[str, ...]]]]:
    """Batches of changes beneath folder ``base`` of the workspace folder ``root``,
    until ``end`` is set or the folder is moved or removed.

    ``armed`` is the tree `arm` already watches (armed here when not given);
    it is closed when this ends. Each batch gathers what came within
    ``debounce`` seconds (``step`` of quiet ends it sooner); paths are parts
    beneath ``root``. Walking runs in ``pool``.

    Raises:
        OSError: the folder cannot be opened or watched (no inotify instances left).
        TooManyFolders: the tree holds more than `MAX_FOLDERS` folders.
        TooDeep: the tree has folders more than `MAX_DEPTH` levels deep.
        Overflowed: the kernel dropped changes (its queue was full).
    """
    loop = asyncio.get_running_loop()
    if armed is None:
        armed = await arm(root, base, pool)
    tree = armed._tree  # noqa: SLF001 - this module's own class
    try:
        ready = asyncio.Event()
        loop.add_reader(tree.fd, ready.set)
        try:
            while not end.is_set():
                if not ready.is_set():
                    waits = [asyncio.ensure_future(ready.wait()),
                             asyncio.ensure_future(end.wait())]
                    try:
                        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        for wait in waits:
                            wait.cancel()
                    if end.is_set():
                        return
                batch: list[tuple[Change, tuple[str, ...]]] = []
                arrived: list[tuple[str, ...]] = []
                gone = False
                deadline = loop.time() + debounce
                while True:
                    ready.clear()
                    changes, came, gone = tree.read()
                    batch += changes
                    arrived += came
                    if gone or loop.time() >= deadline:
                        break
                    await asyncio.sleep(step)
                    if not ready.is_set():
                        break
                for parts in arrived:
                    # A folder made or moved in: watch it, and tell what it already holds.
                    watched, entries = await loop.run_in_executor(
                        pool, functools.partial(tree.walk, parts, strict=False))
                    tree.adopt(watched)
                    batch += [(Change.added, entry) for entry in entries]
                batch = _coalesce(batch)
                if batch:
                    yield batch
                if gone:
                    return
        finally:
            loop.remove_reader(tree.fd)
    finally:
        tree.close()
