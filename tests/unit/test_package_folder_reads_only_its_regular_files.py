"""A package folder (or manifest file) is read as its regular files only, bounded,
never waiting on one, never following a link out of the folder.

A package folder is what a stranger hands you to review. `review`, `diff` and
`package offer` (through --db and --service) read it with
`engine.effects.packages.read_package_folder`: a FIFO, socket or device is a
one-line error naming it (never opened for a blocking read), each file is at
most `MAX_PACKAGE_FILE` bytes and the folder `MAX_PACKAGE_BYTES`; a link
whose target stays inside the folder is followed, one that resolves outside
is refused naming it. A manifest file named alone is read the same careful way.
(Found by a helper: these verbs waited forever on a FIFO, read /dev/zero until
MemoryError, and followed links out of the folder.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.effects import packages
from engine.effects.packages import load_package_folder
from engine.effects.userfile import FileRefused
from tests.childrun import arrowgate

MANIFEST = {"name": "acme.p", "version": "1.0.0", "permissions": {}}

#: How long a verb may run before it counts as waiting on the special file. A blocking
#: read of a FIFO never ends, so any bound tells it; this one leaves room for a child
#: interpreter's start on a loaded 2-core CI machine (5 s did not, under load 12).
HANG_S = 30


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
def test_a_special_file_in_a_package_folder_is_refused_at_once(tmp_path: Path, case: str) -> None:
    argv, special, where = CASES[case]
    old = _folder(tmp_path, "old", None)
    new = _folder(tmp_path, "new", special, where)
    db = tmp_path / "a.db"
    if "offer" in argv:  # a database to offer into
        done = arrowgate(["workspace", "add", "w", str(tmp_path),
                          "--db", str(db)], tmp_path, timeout=20)
        assert done is not None and db.exists(), done and done.stderr[-300:]
    args = [a.format(old=old, new=new, db=db) for a in argv]
    done = arrowgate(args, tmp_path, timeout=HANG_S)
    assert done is not None, f"`arrowgate {' '.join(argv)}` still running after {HANG_S} s ({case})"
    assert done.returncode == 2, done.stderr[-400:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arrowgate: "), done.stderr[-400:]


def test_a_manifest_file_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "manifest.json"
    os.mkfifo(fifo)
    done = arrowgate(["review", str(fifo)], tmp_path, timeout=HANG_S)
    assert done is not None, f"`arrowgate review FIFO` still running after {HANG_S} s"
    assert done.returncode == 2, done.stderr[-400:]


def test_a_link_out_of_the_package_folder_is_refused_naming_it(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not part of the package")
    new = _folder(tmp_path, "new", None)
    (new / "lib.js").symlink_to(secret)
    with pytest.raises(FileRefused, match="lib.js: it is a link to .*outside the package"):
        load_package_folder(new)
    (new / "lib.js").unlink()
    (new / "sub").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(FileRefused, match="sub: it is a link to .*outside the package"):
        load_package_folder(new)


def test_a_link_inside_the_package_folder_is_followed(tmp_path: Path) -> None:
    new = _folder(tmp_path, "new", None)
    (new / "index.js").write_text("main()")
    (new / "alias.js").symlink_to("index.js")
    _raw, digests = load_package_folder(new)
    assert digests["alias.js"] == digests["index.js"]


def test_a_file_over_the_bound_is_refused(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packages, "MAX_PACKAGE_FILE", 100)
    new = _folder(tmp_path, "new", None)
    (new / "big.js").write_text("x" * 101)
    with pytest.raises(FileRefused, match="big.js: it is larger than 100 bytes"):
        load_package_folder(new)
