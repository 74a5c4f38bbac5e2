"""f15: `arrowgate import FILE` opens whatever FILE is and reads it to the end.

A FIFO makes the command wait forever for a writer; a device such as /dev/zero
(or a link to one) is read until memory runs out and ends in a MemoryError
traceback. Case files are read the careful way (`casefile._read`: O_NONBLOCK,
regular files only, a size bound); the canvas file is read with
``Path.read_text()`` (engine/app/cli.py, `_cmd_import`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ._run import arrowgate


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
