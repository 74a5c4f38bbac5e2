"""Short folders under ``/tmp`` that the test process removes when it ends.

A Unix socket's path is at most 107 bytes, and pytest's ``tmp_path`` can be
longer than that, so the service's tests put their sockets under ``/tmp``;
made with ``tempfile.mkdtemp`` and never removed, every run of the suite left
hundreds of folders there. Each folder `short_dir` makes lies in one folder
of this process's, removed (whatever is left in it) at the process's exit.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

__all__ = ["short_dir"]

_root: Path | None = None


def short_dir(prefix: str = "ag") -> Path:
    """A new empty folder with a short path, removed when this process exits."""
    global _root
    if _root is None:
        _root = Path(tempfile.mkdtemp(prefix="ag-tests-", dir="/tmp"))
        atexit.register(shutil.rmtree, _root, True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_root))
