"""Moving a file or folder to the trash by descriptor (SPEC §8.3: no hard delete).

`fs.trash` never hands a path string to anybody after its checks: the item
is checked through a descriptor opened without following links (a folder's
whole tree is scanned beneath it for protected and secret names), then
renamed from the opened parent folder into the trash with ``renameat``, and
what arrived in the trash is compared with what was checked. Should the
entry have been swapped in between (a folder replaced by a link to somewhere
else), the rename moved only that entry — a link moves as a link — and the
entry is put back and the call refused: nothing outside the workspace is
touched, and nothing unchecked stays in the trash.

The trash is the user's (freedesktop.org layout: ``files/`` and ``info/``
with a ``.trashinfo`` each, in ``$XDG_DATA_HOME/Trash`` or, for another
filesystem, ``$topdir/.Trash-$uid``), or a folder given to `Trash` (the
replay keeps its own); either way the item stays recoverable.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from engine.core.text import named_path
from engine.effects.pathwalk import flush_folder, rename_noreplace, walk_down

__all__ = ["MAX_DEPTH", "MAX_SCAN", "Trash", "TrashRefused", "scan_tree"]

#: Entries of a folder scanned at most before trashing it is refused.
MAX_SCAN = 100_000
#: Levels of folders beneath a folder scanned at most (each holds a descriptor).
MAX_DEPTH = 256
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class TrashRefused(Exception):
    """The item may not (or could not) be trashed; ``reason`` is a SPEC §8.3 reason."""

    def __init__(self, reason: str, why: str) -> None:
        super().__init__(why)
        self.reason = reason
        self.why = why


@dataclass(frozen=True, slots=True)
class _Place:
    files: int  #: fd of the folder items go into
    info: int | None  #: fd of the folder of .trashinfo files (freedesktop layout)


def scan_tree(dir_fd: int, prefix: tuple[str, ...],
              guarded: Callable[[list[str]], str | None]) -> None:
    """Refuse when any entry beneath ``dir_fd`` is guarded (protected or secret).

    ``guarded`` gets each entry's workspace-relative parts and returns a
    reason, or None. Links are looked at, never followed; folders are
    opened with ``O_NOFOLLOW`` relative to their parent's descriptor.

    Depth first, holding one descriptor per level of the folder being read
    (a folder's subfolders are remembered by name until their turn, not
    opened): a folder of thousands of subfolders must not use up the
    process's descriptors, which every other open in the engine needs.

    Raises:
        TrashRefused: a guarded entry (its reason), more than `MAX_SCAN`
            entries, or folders more than `MAX_DEPTH` deep.
    """
    seen = 0

    def read(fd: int, parts: tuple[str, ...]) -> list[str]:
        """Check the entries of one open folder; its subfolders' names, to do next."""
        nonlocal seen
        subs: list[str] = []
        with os.scandir(fd) as entries:
            for entry in entries:
                seen += 1
                if seen > MAX_SCAN:
                    raise TrashRefused("too-large", f"the folder holds more than "
                                                    f"{MAX_SCAN} entries")
                path = [*parts, entry.name]
                reason = guarded(path)
                if reason is not None:
                    raise TrashRefused(reason, f"the folder holds {named_path('/'.join(path))}, "
                                               "which a card may not trash")
                if entry.is_dir(follow_symlinks=False):
                    subs.append(entry.name)
        subs.reverse()  # popped from the end: in the order they were read
        return subs

    walk_down(os.dup(dir_fd), prefix, read, max_depth=MAX_DEPTH,
              too_deep=lambda: TrashRefused("too-large", f"the folder is more than "
                                                         f"{MAX_DEPTH} folders deep"))


class Trash:
    """Where trashed items go.

    Args:
        folder: a trash folder of one's own (it gets ``files/`` and
            ``info/``); None means the user's trash.
    """

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder) if folder is not None else None

    def move(self, parent: int, name: str, checked: os.stat_result, origin: Path) -> None:
        """Move entry ``name`` of the open folder ``parent`` into the trash.

        Args:
            checked: the entry's ``lstat`` when it was checked; a different
                entry found at the name is put back and refused.
            origin: where the item was, recorded in its ``.trashinfo``.

        Raises:
            TrashRefused: no usable trash, or the entry changed since it was checked.
        """
        place = self._place(checked.st_dev, parent, origin)
        try:
            base = _stem(name)
            for n in range(1, 10_000):
                slot = base if n == 1 else f"{base}.{n}"
                if place.info is not None and not self._reserve(place.info, slot, origin):
                    continue
                try:
                    rename_noreplace(parent, name, place.files, slot)
                except FileExistsError:
                    self._unreserve(place, slot)
                    continue
                except OSError as exc:
                    self._unreserve(place, slot)
                    if exc.errno == errno.EXDEV:
                        raise TrashRefused("trash-unavailable", "the trash is on another "
                                                                "filesystem") from exc
                    raise
                self._verify(place, parent, name, slot, checked)
                # The move is on the disk only once both folders are (and the
                # info's, which says where it came from): until then a power cut may
                # bring the item back, though the card was told it was trashed.
                flush_folder(parent)
                flush_folder(place.files)
                if place.info is not None:
                    flush_folder(place.info)
                return
            raise TrashRefused("trash-unavailable", "no free name in the trash")
        finally:
            os.close(place.files)
            if place.info is not None:
                os.close(place.info)

    def _verify(self, place: _Place, parent: int, name: str, slot: str,
                checked: os.stat_result) -> None:
        now = os.stat(slot, dir_fd=place.files, follow_symlinks=False)
        if (now.st_dev, now.st_ino) == (checked.st_dev, checked.st_ino) \
                and stat.S_IFMT(now.st_mode) == stat.S_IFMT(checked.st_mode):
            return
        # Swapped between the check and the move: what moved is an entry of
        # a folder inside the workspace (a link moves as a link), unchecked.
        # Put it back where it was, never over anything.
        try:
            rename_noreplace(place.files, slot, parent, name)
            self._unreserve(place, slot)
        except OSError:
            pass  # something new took its name: it stays, recoverable, in the trash
        raise TrashRefused("path-escape", "the path changed while it was being trashed")

    @staticmethod
    def _reserve(info: int, slot: str, origin: Path) -> bool:
        """Write ``slot.trashinfo`` exclusively: the freedesktop way to claim a name.

        Its ``Path=`` is the origin's bytes percent-encoded, as the format says: a
        name need not be UTF-8 (a surrogate-escaped path is no text to encode).
        """
        text = (f"[Trash Info]\nPath={quote(os.fsencode(origin))}\n"
                f"DeletionDate={time.strftime('%Y-%m-%dT%H:%M:%S')}\n")
        try:
            fd = os.open(f"{slot}.trashinfo", os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=info)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())  # flushed with its folder once the item moved
        return True

    @staticmethod
    def _unreserve(place: _Place, slot: str) -> None:
        if place.info is not None:
            try:
                os.unlink(f"{slot}.trashinfo", dir_fd=place.info)
            except OSError:
                pass

    def _place(self, dev: int, parent: int, origin: Path) -> _Place:
        """Open the trash for an item on device ``dev`` in the open folder ``parent``."""
        if self.folder is not None:
            return self._open_layout(self.folder, dev, create=True)
        if sys.platform == "darwin":
            home_trash = Path.home() / ".Trash"
            fd = self._open_dir(home_trash, dev)
            return _Place(fd, None)
        if os.name != "posix":
            raise TrashRefused("trash-unavailable", "no trash this engine can move into here")
        data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        home = Path(data_home) / "Trash"
        try:
            return self._open_layout(home, dev, create=True)
        except TrashRefused:
            pass
        # Another filesystem: its own trash at its top folder (freedesktop.org).
        # From the folder the entry is in, never from ``origin`` resolved: the entry
        # may be a link (trashed as one), and resolving it would look for "its"
        # filesystem where it points, outside the workspace, and make folders there.
        top = _mount_top(_folder_path(parent, origin.parent), dev)
        # The top may be the workspace itself (a drive of its own), where a link may
        # stand at any name: the trash there is entered one real folder at a time.
        uid = str(os.getuid())
        try:
            return self._open_beneath(top, (".Trash", uid), dev, shared=True)
        except TrashRefused:
            pass
        return self._open_beneath(top, (f".Trash-{uid}",), dev)

    def _open_beneath(self, top: Path, names: tuple[str, ...], dev: int, *,
                      shared: bool = False) -> _Place:
        """Open the trash folder ``top/names...`` and its ``files`` and ``info``, making
        those missing (``0700``), one at a time relative to the folder before and
        never through a link (``O_NOFOLLOW``).

        ``shared``: ``names[0]`` is the administrator's ``.Trash``, used only when it
        exists with its sticky bit (freedesktop.org), never made here.
        """
        fd = self._open_dir(top, dev, follow=True)
        try:
            for n, name in enumerate(names):
                below = self._enter(fd, name, dev, create=not (shared and n == 0))
                os.close(fd)
                fd = below
                if shared and n == 0 and not os.fstat(fd).st_mode & stat.S_ISVTX:
                    raise TrashRefused("trash-unavailable", "the shared trash is not sticky")
            files = self._enter(fd, "files", dev, create=True)
            try:
                info = self._enter(fd, "info", dev, create=True)
            except BaseException:
                os.close(files)
                raise
            return _Place(files, info)
        finally:
            os.close(fd)

    @classmethod
    def _enter(cls, fd: int, name: str, dev: int, *, create: bool) -> int:
        """The folder ``name`` of the open folder ``fd`` (made first when ``create``),
        opened without following a link; a link or anything else is refused."""
        if create:
            try:
                os.mkdir(name, 0o700, dir_fd=fd)
                flush_folder(fd)  # made once: on the disk before anything moves into it
            except FileExistsError:
                pass  # a folder already (or a link, which the open below refuses)
            except OSError as exc:
                raise TrashRefused("trash-unavailable",
                                   f"the trash cannot be made ({exc.strerror})") from exc
        try:
            below = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            raise TrashRefused("trash-unavailable",
                               f"the trash cannot be opened ({exc.strerror})") from exc
        return _on_filesystem(below, dev)

    def _open_layout(self, folder: Path, dev: int, *, create: bool) -> _Place:
        if create:
            for sub in ("files", "info"):
                try:
                    (folder / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
                except OSError as exc:
                    raise TrashRefused("trash-unavailable",
                                       f"the trash cannot be made ({exc.strerror})") from exc
        files = self._open_dir(folder / "files", dev)
        try:
            info = self._open_dir(folder / "info", dev)
        except BaseException:
            os.close(files)
            raise
        return _Place(files, info)

    @staticmethod
    def _open_dir(folder: Path, dev: int, *, follow: bool = False) -> int:
        try:
            fd = os.open(folder, _DIR_FLAGS & ~os.O_NOFOLLOW if follow else _DIR_FLAGS)
        except OSError as exc:
            raise TrashRefused("trash-unavailable",
                               f"the trash cannot be opened ({exc.strerror})") from exc
        return _on_filesystem(fd, dev)


def _on_filesystem(fd: int, dev: int) -> int:
    """``fd``, an open trash folder, if it is on the filesystem ``dev`` (a move there is
    a rename, never a copy); else it is closed and the trash refused."""
    if os.fstat(fd).st_dev != dev:
        os.close(fd)
        raise TrashRefused("trash-unavailable", "the trash is on another filesystem")
    return fd


#: The bytes of an item's name its trash name keeps: room for ``.9999`` and
#: ``.trashinfo`` within the filesystem's 255.
_STEM_BYTES = 200


def _stem(name: str) -> str:
    """``name`` cut to `_STEM_BYTES` bytes, whole characters only.

    Counted in bytes, not characters: 200 characters of UTF-8 are up to 800
    bytes, and a 254-byte name of two-byte characters with ``.trashinfo``
    after it is past what the filesystem takes.
    """
    raw = os.fsencode(name)
    if len(raw) <= _STEM_BYTES:
        return name
    cut = raw[:_STEM_BYTES]
    # Back to the end of a whole character; a name that is not UTF-8 at all (the
    # filesystem's bytes) is cut where the bytes end.
    for end in range(len(cut), len(cut) - 4, -1):
        try:
            cut[:end].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return os.fsdecode(cut[:end])
    return os.fsdecode(cut)


def _folder_path(fd: int, fallback: Path) -> Path:
    """The path of the open folder ``fd`` as the kernel knows it (where ``/proc`` tells),
    else ``fallback`` (the folder the walk opened, by name)."""
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return fallback
    # A folder removed meanwhile reads "... (deleted)": not a path to look up from.
    return Path(path) if path.startswith("/") and not path.endswith(" (deleted)") else fallback


def _mount_top(path: Path, dev: int) -> Path:
    """The top folder of the filesystem ``path`` is on (the operator's folder, not a card's)."""
    path = path.resolve()
    while path.parent != path:
        try:
            if os.stat(path.parent).st_dev != dev:
                return path
        except OSError:
            return path
        path = path.parent
    return path
