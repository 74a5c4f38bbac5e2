"""Package folders on disk: a card's manifest and the digests of its files (SPEC §2).

Reading a folder is a file call, so it lives here rather than in the pure
`engine.core.manifest`, which validates and hashes what this returns.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engine.core.errors import ManifestInvalid
from engine.core.manifest import file_digests, loads_manifest

__all__ = ["load_package_folder"]


def load_package_folder(folder: str | Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Read a package folder: its raw manifest and the digests of every file.

    Raises:
        ManifestInvalid: there is no readable ``manifest.json``.
    """
    root = Path(folder)
    try:
        raw = loads_manifest((root / "manifest.json").read_bytes())
    except (OSError, ValueError) as exc:
        raise ManifestInvalid(f"$: cannot read {root / 'manifest.json'}: {exc}",
                              problems=[("$", f"cannot read manifest.json: {exc}")]) from exc
    files: dict[str, str | bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath) / name
            files[full.relative_to(root).as_posix()] = full.read_bytes()
    return raw, file_digests(files)
