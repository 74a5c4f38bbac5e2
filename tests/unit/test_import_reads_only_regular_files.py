"""`arrowgate import FILE` reads only a regular file, of bounded size, and never waits on it.

FILE is whatever the name points at: a FIFO, or a link to /dev/zero. It is
read as every file a person names is (`engine.effects.userfile`: opened
non-blocking, checked to be a regular file on the descriptor, read up to a
bound), so such a FILE is a one-line error naming it, exit 2, at once.
(Found by a helper: the import waited forever on a FIFO and read /dev/zero
until MemoryError — `json.loads(Path(...).read_text())` in engine/app/cli.py.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.childrun import arrowgate


def _special(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / "board.canvas"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_import_of_a_fifo_or_device_fails_at_once_with_one_line(tmp_path: Path,
                                                                kind: str) -> None:
    path = _special(tmp_path, kind)
    done = arrowgate(["import", str(path), "--db", str(tmp_path / "a.db"),
                      "--workspace", "w"], tmp_path)
    assert done is not None, "arrowgate import still waiting on the file after 8 s"
    assert done.returncode == 2, done.stderr[-400:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arrowgate: "), done.stderr[-400:]
