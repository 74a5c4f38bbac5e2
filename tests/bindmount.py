"""A folder at a second path, by a bind mount: what a case-folding file system does
with a name spelled otherwise (one folder, two paths), on a Linux that cannot mount
one. Skips where no mount can be made (no privilege to mount)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["bound"]


@contextlib.contextmanager
def bound(folder: Path, at: Path) -> Iterator[Path]:
    """``folder`` (or a file) at ``at`` (made here unless it is a folder already, a
    folder or an empty file to mount on) for the block; unmounted after it, lazily when
    something still holds it."""
    if folder.is_dir():
        at.mkdir(parents=True, exist_ok=True)
    else:
        at.parent.mkdir(parents=True, exist_ok=True)
        at.touch(exist_ok=False)
    made = subprocess.run(["mount", "--bind", str(folder), str(at)], capture_output=True,
                          check=False)
    if made.returncode != 0:
        pytest.skip(f"no bind mount here: {made.stderr.decode().strip()}")
    try:
        yield at
    finally:
        if subprocess.run(["umount", str(at)], capture_output=True, check=False).returncode:
            subprocess.run(["umount", "-l", str(at)], check=True)
