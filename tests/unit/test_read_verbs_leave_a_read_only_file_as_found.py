"""The verbs that only read leave the folder of a database file they may not write as
they found it, though they may write the folder: no ``-wal`` or ``-shm`` file is made
beside it (README, "--db FILE": "`log show`, `log export` and `log verify` leave the
database's folder as they found it").

(Found in round 31, playing a newcomer who made a database read-only: `log verify` left
a ``-wal`` and a ``-shm`` file of the database's mode, read-only, beside it, which
SQLite's ``mode=ro`` makes and cannot remove; once the file was made writable again,
every verb that writes failed, "STORE_FAILED: … attempt to write a readonly database".)
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import Engine
from tests.unit.test_read_verbs_in_read_only_folder import _read

#: The user the verbs run as when the test runs as root (root writes any file).
_NOBODY = 65534


@pytest.fixture
def folder_of_its_reader() -> Iterator[Path]:
    """A folder the user the verbs run as may write (`_read`: nobody, under root), where
    that user can reach it (not under pytest's folder, which only its owner may enter)."""
    folder = Path(tempfile.mkdtemp(prefix="ag-rofile-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def _own(folder: Path) -> None:
    """Give ``folder`` and its files to the user the verbs run as."""
    if os.geteuid() == 0:
        for path in [folder, *folder.iterdir()]:
            os.chown(path, _NOBODY, _NOBODY)
    os.chmod(folder, 0o755)


def test_read_verbs_make_no_file_beside_a_database_they_may_not_write(
        tmp_path: Path, folder_of_its_reader: Path) -> None:
    """A read-only database file in a folder its reader may write: the read verbs make
    no file beside it, and a writer opens it once it is writable again."""
    # GIVEN a database, read-only, in a folder its reader may write
    engine = Engine.open(tmp_path / "made.db")
    try:
        asyncio.run(engine.create_workspace("w1", str(tmp_path)))
    finally:
        engine.close()
    folder = folder_of_its_reader
    for suffix in ("", ".anchor"):
        shutil.copy(f"{tmp_path / 'made.db'}{suffix}", folder / f"app.db{suffix}")
    os.chmod(folder / "app.db", 0o444)
    _own(folder)
    db = str(folder / "app.db")
    # WHEN the verbs that only read read it (one process: each start costs a second)
    verbs = [["log", "verify"], ["log", "show"], ["log", "export"], ["hold", "list"],
             ["export"]]
    done = _read("-c", "import json, sys; from engine.app.cli import main; "
                 f"print(json.dumps([main([*v, '--db', {db!r}]) for v in {verbs!r}]))",
                 folder=folder, program=sys.executable)
    # THEN they read it, and the folder holds what it held
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [0] * len(verbs), done.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["app.db", "app.db.anchor"]
    # AND made writable again, the database takes a writer's change
    os.chmod(folder / "app.db", 0o644)
    done = _read("-c", "import asyncio; from engine import Engine; "
                 f"e = Engine.open({db!r}); "
                 f"asyncio.run(e.create_workspace('w2', {str(folder)!r})); e.close()",
                 folder=folder, program=sys.executable)
    assert done.returncode == 0, done.stderr
