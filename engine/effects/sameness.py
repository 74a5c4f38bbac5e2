"""Whether a folder is, holds or lies in another: told by what the file system says each
is (its device and inode), not by how their paths are spelled.

On a case-folding file system (macOS's APFS and HFS+, Windows drives through WSL's
``/mnt/c``, FAT and exFAT drives, SMB shares, ext4 folders with ``casefold``),
``.../Arrowgate`` and ``.../arrowgate`` name one folder, as ``José`` spelled
decomposed (NFD, as macOS stores it) and composed (NFC) do; and anywhere, a bind
mount names a folder at a second path. A comparison of path strings takes each for
two folders. Two names of one file have one (device, inode): that is compared.

Where the file system cannot be asked (a folder that may not be looked at), the
names are compared as `engine.core.fsrules.fold` compares them — case-insensitively,
after Unicode normalisation — which may take two folders of a case-sensitive file
system for one: refusing a folder that is not the app's is the safe mistake.

A bind mount of a folder *inside* another shows it at a place no folder above is the
other: there the mount table tells where each lies on its filesystem
(`engine.effects.mounts`), where it can be read.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from engine.core.fsrules import fold
from engine.effects import mounts

__all__ = ["Ident", "folded_within", "holds", "ident", "identity", "lies_in", "lineage",
           "within"]

#: A file's (device, inode): the same for every name and every mount of it.
Ident = tuple[int, int]


def ident(st: os.stat_result) -> Ident:
    """The (device, inode) of a `os.stat` result."""
    return st.st_dev, st.st_ino


def identity(path: Path) -> Ident | None:
    """The (device, inode) of what ``path`` names, following links; None when there is
    nothing there.

    Raises:
        OSError: it cannot be looked at (a folder on the way may not be searched).
    """
    try:
        return ident(os.stat(path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def lineage(path: Path) -> tuple[Ident, ...]:
    """The (device, inode) of each folder ``path`` lies in, from the file system's root
    down, and of ``path`` itself: as far as they exist (a folder not made yet holds
    nothing). One `os.stat` for each.

    Raises:
        OSError: one cannot be looked at.
    """
    found: list[Ident] = []
    for step in (*reversed(path.parents), path):
        here = identity(step)
        if here is None:
            break
        found.append(here)
    return tuple(found)


def within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies in it, by their spellings alone."""
    return path == folder or folder in path.parents


def folded_within(path: Path, folder: Path) -> bool:
    """`within`, each name compared as `fold` compares it (case, Unicode form, ...)."""
    mine, theirs = [fold(p) for p in path.parts], [fold(p) for p in folder.parts]
    return mine[:len(theirs)] == theirs


def holds(folder: Path, folder_id: Ident | None, path: Path, *,
          line: Collection[Ident] | None = None) -> bool:
    """Whether ``folder`` is ``path`` or one of the folders it lies in: by their
    spellings, or by ``folder_id`` (the folder's (device, inode); None when there is
    no such folder) among ``path``'s `lineage` (``line`` when the caller has it).
    Compared by folded names (`folded_within`) when ``path``'s lineage cannot be told.
    """
    if within(path, folder):
        return True
    if folder_id is None:
        return False
    if line is None:
        try:
            line = lineage(path)
        except OSError:
            return folded_within(path, folder)
    return folder_id in line


def lies_in(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies in it, links followed (each as far as it
    exists): `holds`, with ``folder``'s (device, inode) looked up; by folded names when
    ``folder`` cannot be looked at. And where the mount table says so (`mounts.within`):
    a folder of ``folder`` bind-mounted at another place, which no folder above is."""
    try:
        path, folder = path.resolve(), folder.resolve()
    except (OSError, RuntimeError):  # a loop of links: judged as they are spelled
        pass
    try:
        folder_id = identity(folder)
    except OSError:
        return folded_within(path, folder)
    if holds(folder, folder_id, path):
        return True
    table = mounts.table()
    return mounts.within(mounts.place_at(path, table), mounts.place_at(folder, table))
