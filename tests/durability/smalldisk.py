"""A small filesystem of its own that a test can really fill (ENOSPC, not an injected error).

A tmpfs of a few MiB mounted on a fresh folder: needs root (CI runs the suite as root)
and a kernel that lets it mount; elsewhere the tests using it skip, saying why.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["fill", "small_disk"]


@contextmanager
def small_disk(mib: int) -> Iterator[Path]:
    """A mounted tmpfs of ``mib`` MiB, unmounted (and its folder removed) after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    folder = Path(tempfile.mkdtemp(prefix="arrowgate-full-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mib}m,mode=0755", "tmpfs",
                           str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        folder.rmdir()
        pytest.skip(f"mount refused a tmpfs here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        # Lazy: a file a failed test left open does not keep the mount.
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
        folder.rmdir()


def fill(folder: Path) -> Path:
    """Fill ``folder``'s filesystem to the last byte with one file; returns it (its removal
    gives the space back)."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for size in (1 << 16, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as exc:
                if exc.errno != 28:  # ENOSPC: the next, smaller size fills what is left
                    raise
    finally:
        os.close(fd)
    return filler
