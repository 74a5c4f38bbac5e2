"""The read verbs read a database in a folder they may not write (a backup on a
read-only mount, a snapshot, another user's app folder): with no changes waiting in
a `-wal` file it is read as unchanging (`immutable=1`), since no writer of ours can
appear there; with changes waiting they refuse with one line naming the folder
(exit 2), never reading around those changes.

(Found by a helper: even `arrowgate log verify` refused such a file with "not a
readable database: attempt to write a readonly database" — WAL's -shm file cannot be
made there — so an auditor could not verify a read-only copy of the log.)"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.cli_process import ARROWGATE, demo_db


@pytest.fixture
def read_only_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="ag-ro-"))
    try:
        yield folder
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)


def _seal(folder: Path) -> None:
    for f in folder.iterdir():
        os.chmod(f, 0o444)
    os.chmod(folder, 0o555)


def _read(*args: str, folder: Path,
          program: str = ARROWGATE) -> subprocess.CompletedProcess[str]:
    """`arrowgate ARGS` (or ``program`` ARGS) as a user who cannot write ``folder`` (root
    reads as nobody)."""
    command = [program, *args]
    if os.geteuid() == 0:  # root writes anywhere: read as nobody
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv to drop root")
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env={**os.environ, "HOME": str(folder)})


def test_log_verify_reads_a_database_in_a_read_only_folder(tmp_path: Path,
                                                          read_only_folder: Path) -> None:
    source = demo_db(tmp_path)
    for suffix in ("", ".anchor"):
        shutil.copy(f"{source}{suffix}", read_only_folder / f"app.db{suffix}")
    _seal(read_only_folder)
    db = str(read_only_folder / "app.db")
    done = _read("log", "verify", "--db", db, folder=read_only_folder)
    assert done.returncode == 0, done.stderr
    assert "log verify: ok" in done.stdout
    for verb in (["log", "show"], ["log", "export"]):
        done = _read(*verb, "--db", db, folder=read_only_folder)
        assert done.returncode == 0, (verb, done.stderr)
        assert done.stdout.count("\n") > 3
    # The verbs that look at the store only read too: such a copy is theirs to read
    # (one process for the four: each `arrowgate` start costs a second or two).
    verbs = [["reach", "standup"], ["export"], ["hold", "list"],
             ["package", "review", "demo.standup"]]
    done = _read("-c", "import json, sys; from engine.app.cli import main; "
                 f"print(json.dumps([main([*v, '--db', {db!r}]) for v in {verbs!r}]))",
                 folder=read_only_folder, program=sys.executable)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [0, 0, 0, 0], done.stdout
    assert sorted(p.name for p in read_only_folder.iterdir()) == ["app.db", "app.db.anchor"]


def test_changes_waiting_in_a_wal_file_are_refused_naming_the_folder(
        tmp_path: Path, read_only_folder: Path) -> None:
    source = demo_db(tmp_path)
    writer = sqlite3.connect(source)
    try:
        writer.execute("pragma wal_autocheckpoint = 0")
        writer.execute("insert into meta (key, value) values ('waiting', '1')")
        writer.commit()
        # Copied while the writer is open: its -wal file holds that commit.
        for suffix in ("", "-wal", ".anchor"):
            shutil.copy(f"{source}{suffix}", read_only_folder / f"app.db{suffix}")
    finally:
        writer.close()
    assert (read_only_folder / "app.db-wal").stat().st_size > 0
    _seal(read_only_folder)
    done = _read("log", "verify", "--db", str(read_only_folder / "app.db"),
                 folder=read_only_folder)
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith("arrowgate:") and "Traceback" not in done.stderr
    assert f"its folder {read_only_folder.resolve()} cannot be written" in done.stderr
