"""A write's temporary files: named so that only this app's can be told, cleaned once left.

A file write goes to a temporary file beside its target, renamed over it once
flushed (`write_atomically`). A process that exits while such a write is
stuck (a network file system that stopped answering, Ctrl-C) leaves the
temporary file behind, hidden beside the target. The next write to that folder
cleans such leftovers — but it deletes a file, where nothing else in the
engine ever does (SPEC §8.3: no hard delete), so a file is taken for a leftover
only when it is beyond doubt one:

- its name carries a tag keyed by a secret of the app's own data folder
  (HMAC-SHA256 of the name's other parts): a file of the person's, or one a card
  wrote, named like a leftover by chance or on purpose, never has one that
  checks (the key is never in a workspace; a card cannot read the app's data);
- it is a regular file of this user's, opened without following a link, and the
  name still names that very file as it is unlinked (one its owner may not read, of
  mode ``000`` as the file it was written over, is made readable to take its lock,
  and given its mode back if it stays);
- no writer holds it: each writer holds an ``flock`` on its temporary file from
  its creation to its rename, which the kernel lets go when its process ends, and
  a file not changed for `LEFTOVER_AGE` seconds is all a cleaner looks at (the
  moment between a writer's create and its lock is never one of them).

Each folder is looked through once per `TempFiles` (once per engine): at its first
write, at most `SCAN` entries.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import os
import re
import secrets
import stat
import threading
import time
from pathlib import Path

from engine.effects.pathwalk import flush_folder

__all__ = ["LEFTOVER_AGE", "SCAN", "STEM_BYTES", "TempFiles", "lock_as_writer",
           "write_atomically"]

#: Seconds a temporary file must have stood unchanged before a cleaner looks at it.
LEFTOVER_AGE = 60.0
#: Entries of a folder looked through at most for leftovers.
SCAN = 100_000
#: The bytes of the target's name a temporary file's name keeps: 255 less the 31
#: around it (``.``, ``.``, 8 hex digits, ``-``, 16 hex digits, ``.tmp``).
STEM_BYTES = 255 - 31
#: The key's file in the app's data folder.
KEY_FILE = "fs-temp.key"
_KEY_BYTES = 32
_NAME = re.compile(rb"\.(.*)\.([0-9a-f]{8})-([0-9a-f]{16})\.tmp", re.DOTALL)
_FOLDERS_REMEMBERED = 4096


class TempFiles:
    """The temporary files' names of one engine's writes, and the cleaning of leftovers.

    Args:
        data_dir: the app's own data folder, where the key is kept (made there once,
            ``0600``): every engine of the app then knows its leftovers. None (or a
            key that cannot be kept there) gives a key of this object's own: its
            writes' leftovers are never taken for anyone's after it is gone.
    """

    def __init__(self, data_dir: Path | None) -> None:
        self._data_dir = data_dir
        self._key: bytes | None = None  # read (or made) at the first write
        self._key_lock = threading.Lock()  # the file threads write at once
        self._looked: set[tuple[int, int]] = set()

    def name_for(self, target: str) -> str:
        """A new temporary file's name for ``target``: hidden, beside it, tagged as ours."""
        # Cut whole characters: its name says what the file was for, if one is ever left.
        stem = target.encode("utf-8", "surrogateescape")[:STEM_BYTES]
        stem = stem.decode("utf-8", "ignore").encode("utf-8", "surrogateescape")
        nonce = secrets.token_hex(4).encode()
        name = b"." + stem + b"." + nonce + b"-" + self._tag(stem, nonce) + b".tmp"
        return os.fsdecode(name)

    def is_ours(self, name: str) -> bool:
        """Whether ``name`` is the name of a temporary file of this app's writes."""
        found = _NAME.fullmatch(os.fsencode(name))
        return found is not None and hmac.compare_digest(
            self._tag(found.group(1), found.group(2)), found.group(3))

    def _tag(self, stem: bytes, nonce: bytes) -> bytes:
        with self._key_lock:
            if self._key is None:
                kept = _load_key(self._data_dir) if self._data_dir is not None else None
                self._key = kept if kept is not None else secrets.token_bytes(_KEY_BYTES)
        mac = hmac.new(self._key, stem + b"/" + nonce, hashlib.sha256)
        return mac.hexdigest()[:16].encode()

    def clean(self, folder: int) -> None:
        """Remove the leftovers in the open folder ``folder``, the first time it is seen.

        Best effort: what cannot be read or removed stays, and nothing here fails
        the write that asked.
        """
        try:
            st = os.fstat(folder)
        except OSError:
            return
        key = (st.st_dev, st.st_ino)
        if key in self._looked:
            return
        if len(self._looked) >= _FOLDERS_REMEMBERED:
            self._looked.clear()
        self._looked.add(key)
        old = time.time() - LEFTOVER_AGE
        try:
            with os.scandir(folder) as entries:
                for seen, entry in enumerate(entries, 1):
                    if seen > SCAN:
                        break
                    if entry.name.endswith(".tmp") and self.is_ours(entry.name):
                        _remove_leftover(folder, entry.name, old)
        except OSError:
            pass


def write_atomically(temp: TempFiles, parent: int, last: str, data: bytes,
                     mode: int | None) -> None:
    """Write ``data`` to ``last`` in the open folder ``parent``: to a temporary file of
    ``temp``'s beside it, flushed, renamed over the target, and the folder flushed.

    ``mode`` is the permission bits the file gets (the target's, when it existed);
    None is a new file's ``0644`` less the umask. The folder's leftovers are cleaned
    first (`TempFiles.clean`).
    """
    temp.clean(parent)
    tmp = temp.name_for(last)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644 if mode is None else 0o600, dir_fd=parent)
    try:
        # Held until after the rename (the descriptor stays open): no cleaner takes
        # it for a leftover while this write is under way, however long.
        lock_as_writer(fd)
        if mode is not None:  # set before a byte is written: never readable by more
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.rename(tmp, last, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=parent)
        raise
    finally:
        os.close(fd)
    # The rename is on the disk only once its folder is: until then a power cut may
    # undo a write the caller was told was done.
    flush_folder(parent)


def lock_as_writer(fd: int) -> None:
    """Hold the temporary file ``fd`` as its writer's until it is closed (its process
    ending lets it go): a cleaner never takes it for a leftover meanwhile. A file
    system without locks: the age alone keeps cleaners off."""
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def _remove_leftover(folder: int, name: str, old: float) -> None:
    """Unlink ``name`` of ``folder`` if it is a regular file of this user's, unchanged
    since ``old``, that no writer holds — and still the same file as it goes."""
    readable = None  # the mode to give back, when the file's was made readable here
    try:
        fd = os.open(name, _OPEN_FLAGS, dir_fd=folder)
    except PermissionError:
        opened = _open_unreadable(folder, name, old)
        if opened is None:
            return
        fd, readable = opened
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_mtime > old):
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # a writer holds it (or locks cannot be asked): not a leftover
        now = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
            os.unlink(name, dir_fd=folder)
            readable = None  # gone: no mode to give back
    except OSError:
        pass
    finally:
        if readable is not None:
            with contextlib.suppress(OSError):
                os.fchmod(fd, readable)
        os.close(fd)


def _open_unreadable(folder: int, name: str, old: float) -> tuple[int, int] | None:
    """``name`` of ``folder`` opened for reading though its mode refuses that to its
    owner (a write over a file of mode ``000`` takes that mode), and the mode it had;
    None unless it is a regular file of this user's unchanged since ``old``.

    Its lock can only be asked through a descriptor open for reading, so the file is
    made readable to its owner first — the very file looked at (through an ``O_PATH``
    descriptor, never the name again); the caller gives its mode back unless it goes.
    """
    try:
        probe = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        return None
    try:
        st = os.fstat(probe)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_mtime > old or st.st_mode & stat.S_IRUSR):
            return None
        mode = stat.S_IMODE(st.st_mode)
        # The kernel's name for the descriptor: the inode it holds, whatever the name
        # names by now (fchmod does not take an O_PATH descriptor).
        held = f"/proc/self/fd/{probe}"
        os.chmod(held, mode | stat.S_IRUSR)
        try:
            # Followed: the link is the kernel's own, to the inode checked above.
            fd = os.open(held, _OPEN_FLAGS & ~os.O_NOFOLLOW)
        except OSError:
            os.chmod(held, mode)
            return None
        return fd, mode
    except OSError:
        return None
    finally:
        os.close(probe)


def _load_key(data_dir: Path) -> bytes | None:
    """The key kept in ``data_dir`` (made there first if missing); None when it cannot
    be read or kept, or is not the key's size (then no leftover is ever another's)."""
    path = data_dir / KEY_FILE
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            made = _make_key(path)
            if made is not None:
                return made
            continue  # another engine made it first: read it
        except OSError:
            return None
        try:
            key = os.read(fd, _KEY_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        return key if len(key) == _KEY_BYTES else None
    return None


def _make_key(path: Path) -> bytes | None:
    """A new key written whole to ``path`` (exclusively, ``0600``); None if one is
    there already, or it cannot be made."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(_KEY_BYTES)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # whole, and never over a key another engine made meanwhile
        finally:
            os.unlink(tmp)
    except OSError:
        return None
    return key
