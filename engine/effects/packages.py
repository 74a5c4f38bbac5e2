"""Package folders on disk: a card's manifest and the digests of its files (SPEC §2).

Reading a folder is a file call, so it lives here rather than in the pure
`engine.core.manifest`, which validates and hashes what this returns.

A package folder is what a stranger hands you to review, so it is read as
warily as any file a person names (`engine.effects.userfile`): regular files
only (a FIFO, socket or device is refused, never opened for a blocking read),
each at most `MAX_PACKAGE_FILE` bytes, at most `MAX_PACKAGE_FILES` files and
`MAX_PACKAGE_BYTES` in all. A link whose target stays inside the folder is
followed (the file it names is part of the package, as it always was); a link
that resolves outside the folder is refused by name — its target is not
what the reviewer sees in the folder, and the hash must not vouch for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.core.errors import ManifestInvalid
from engine.core.manifest import file_digests, loads_manifest
from engine.effects.userfile import FileRefused, read_user_bytes

__all__ = ["MAX_PACKAGE_BYTES", "MAX_PACKAGE_FILE", "MAX_PACKAGE_FILES", "PackageFolder",
           "load_package_folder", "read_package_folder"]

#: The largest file of a package folder (as a case file or a file call's default).
MAX_PACKAGE_FILE = 16 * 1024 * 1024
#: The most bytes read from one package folder in all.
MAX_PACKAGE_BYTES = 64 * 1024 * 1024
#: The most files read from one package folder.
MAX_PACKAGE_FILES = 10_000


@dataclass(frozen=True)
class PackageFolder:
    """A package folder as read: its raw manifest and every file's bytes by path."""

    manifest: Any
    files: dict[str, bytes]

    @property
    def manifest_text(self) -> bytes:
        """The ``manifest.json`` file's bytes: what `Engine.offer` takes as the manifest,
        so that the engine hashes the file the reviewer reads (`fold_manifest`)."""
        return self.files["manifest.json"]

    @property
    def digests(self) -> dict[str, str]:
        """Each file's digest by path (`file_digests`)."""
        return file_digests(dict(self.files))


def load_package_folder(folder: str | Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Read a package folder: its raw manifest and the digests of every file.

    For review and hashing (``content_hash(digests)`` is the package's hash). To
    offer the folder, give the engine the manifest's text, `PackageFolder.manifest_text`
    of `read_package_folder`: the engine digests the manifest it is given itself, so a
    parsed value offered with these digests is hashed as its canonical JSON instead
    of the file (`fold_manifest`), and the package's hash is not the folder's.

    Raises:
        ManifestInvalid: there is no readable ``manifest.json``.
        FileRefused: a file of the folder is not a regular file, is too large,
            links outside the folder, or the folder holds too much.
    """
    package = read_package_folder(folder)
    return package.manifest, package.digests


def read_package_folder(folder: str | Path) -> PackageFolder:
    """Read a package folder: its raw manifest and the bytes of every file.

    Raises:
        ManifestInvalid: there is no readable ``manifest.json``.
        FileRefused: as `load_package_folder`.
    """
    root = Path(folder)
    inside = root.resolve()
    try:
        manifest = _read_entry(inside, root / "manifest.json", MAX_PACKAGE_FILE)
        raw = loads_manifest(manifest)
    except (OSError, ValueError) as exc:
        why = exc.problem if isinstance(exc, FileRefused) else exc
        raise ManifestInvalid(f"$: cannot read {root / 'manifest.json'}: {why}",
                              problems=[("$", f"cannot read manifest.json: {why}")]) from exc
    files: dict[str, bytes] = {}
    total = 0
    for full in _walk(root, inside):
        if len(files) >= MAX_PACKAGE_FILES:
            raise FileRefused(root, f"holds more than {MAX_PACKAGE_FILES} files")
        name = full.relative_to(root).as_posix()
        # The manifest's bytes are the ones parsed above, not read again: a file swapped
        # between two reads would have the hash cover other permissions than those shown.
        data = manifest if name == "manifest.json" else \
            _read_entry(inside, full, MAX_PACKAGE_FILE)
        total += len(data)
        if total > MAX_PACKAGE_BYTES:
            raise FileRefused(root, f"holds more than {MAX_PACKAGE_BYTES} bytes of files")
        files[name] = data
    return PackageFolder(raw, files)


def _walk(root: Path, inside: Path) -> Iterator[Path]:
    """Every file name under ``root`` in a stable order; a folder link leaving it is refused.

    A link to a folder is never descended (no cycles, no second copy), as before;
    one that points outside is refused so the reviewer learns of it.
    """
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=_raise):
        dirnames.sort()
        for name in dirnames:
            _check_link(inside, Path(dirpath) / name)
        yield from (Path(dirpath) / name for name in sorted(filenames))


def _raise(exc: OSError) -> None:
    raise FileRefused(exc.filename or "?", f"cannot be read: {exc.strerror}")


def _check_link(inside: Path, path: Path) -> Path:
    """Where ``path`` leads: itself, or a link's target when that stays inside the folder."""
    if not path.is_symlink():
        return path
    target = path.resolve()
    if not target.is_relative_to(inside):
        raise FileRefused(path, f"is a link to {target}, outside the package folder")
    return target


def _read_entry(inside: Path, path: Path, limit: int) -> bytes:
    """A file of the folder, read as `read_user_bytes` reads it; its name is in any error."""
    target = _check_link(inside, path)
    try:
        return read_user_bytes(target, limit=limit)
    except FileRefused as exc:
        raise FileRefused(path, exc.problem) from None
