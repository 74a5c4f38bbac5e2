"""f15: reading a package folder or manifest file opens FIFOs and devices.

`load_package_folder` (engine/effects/packages.py) reads ``manifest.json``
and then every name ``os.walk`` lists with ``Path.read_bytes()``, and
`_read_manifest` (engine/app/cli.py) reads a manifest file with
``Path.read_text()``: no check that the entry is a regular file, no size
bound, a blocking open. So ``arrowgate review``, ``arrowgate diff`` and
``arrowgate package offer`` wait forever on a FIFO in a package folder (or a
FIFO named manifest.json), and read a link to /dev/zero until memory runs out
(MemoryError traceback). A package folder is what a stranger hands you to
review; case files are read the careful way (`casefile._read`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ._run import arrowgate

MANIFEST = {"name": "acme.p", "version": "1.0.0", "permissions": {}}


def _folder(root: Path, name: str, special: str | None, where: str = "index.js") -> Path:
    folder = root / name
    folder.mkdir()
    if where != "manifest.json":
        (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    if special == "fifo":
        os.mkfifo(folder / where)
    elif special == "zero":
        (folder / where).symlink_to("/dev/zero")
    return folder


CASES = {
    "review, a FIFO in the folder": (["review", "{new}"], "fifo", "index.js"),
    "review, manifest.json is a FIFO": (["review", "{new}"], "fifo", "manifest.json"),
    "review, a link to /dev/zero in the folder": (["review", "{new}"], "zero", "lib.js"),
    "diff, a FIFO in the new folder": (["diff", "{old}", "{new}"], "fifo", "index.js"),
    "package offer, a FIFO in the folder": (["package", "offer", "{new}", "--db", "{db}"],
                                           "fifo", "index.js"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_special_file_is_refused_at_once(tmp_path: Path, case: str) -> None:
    argv, special, where = CASES[case]
    old = _folder(tmp_path, "old", None)
    new = _folder(tmp_path, "new", special, where)
    db = tmp_path / "a.db"
    if "offer" in argv:  # a database to offer into
        done = arrowgate(["workspace", "add", "w", str(tmp_path),
                          "--db", str(db)], tmp_path, timeout=20)
        assert done is not None and db.exists(), done and done.stderr[-300:]
    args = [a.format(old=old, new=new, db=db) for a in argv]
    done = arrowgate(args, tmp_path, timeout=5)
    assert done is not None, f"`arrowgate {' '.join(argv)}` still running after 5 s ({case})"
    assert done.returncode == 2, done.stderr[-400:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arrowgate: "), done.stderr[-400:]


def test_a_manifest_file_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "manifest.json"
    os.mkfifo(fifo)
    done = arrowgate(["review", str(fifo)], tmp_path, timeout=5)
    assert done is not None, "`arrowgate review FIFO` still running after 5 s"
    assert done.returncode == 2, done.stderr[-400:]
