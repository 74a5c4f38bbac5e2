"""The verbs that open the engine on ``--db`` (the write verbs, ``upgrade``) in a
folder they cannot write (a read-only mount, a snapshot, another user's app folder) are
refused as input they cannot use: exit 2, one line naming the folder and saying that
``log show|export|verify`` read such a database — never exit 1, a refusal or a finding,
nor SQLite's bare "attempt to write a readonly database".

(Found in round 25: they answered ``STORE_FAILED: cannot open the store …: attempt to
write a readonly database`` with exit 1.)
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from engine import Engine
from tests.unit.test_read_verbs_in_read_only_folder import _read, _seal, read_only_folder

__all__ = ["read_only_folder"]  # the fixture, shared


def test_engine_verbs_in_a_read_only_folder_are_unusable_input(
        tmp_path: Path, read_only_folder: Path) -> None:
    engine = Engine.open(tmp_path / "app.db")
    try:
        asyncio.run(engine.create_workspace("w1", str(tmp_path)))
    finally:
        engine.close()
    for suffix in ("", ".anchor"):
        shutil.copy(f"{tmp_path / 'app.db'}{suffix}", read_only_folder / f"app.db{suffix}")
    _seal(read_only_folder)
    db = str(read_only_folder / "app.db")
    # Verbs that write (`reach`, `export`, `hold list` and `package review` only read,
    # and read such a database: tests/unit/test_read_verbs_in_read_only_folder.py);
    # two processes (another user's) suffice.
    for verb in (["call", "c1", "agents.list"], ["arrow", "remove", "e1"]):
        done = _read(*verb, "--db", db, folder=read_only_folder)
        assert done.returncode == 2, (verb, done.stderr)
        assert done.stderr.startswith("arrowgate:") and done.stderr.count("\n") == 1, verb
        assert str(read_only_folder.resolve()) in done.stderr, (verb, done.stderr)
        assert "log show" in done.stderr, (verb, done.stderr)
    assert sorted(p.name for p in read_only_folder.iterdir()) == ["app.db", "app.db.anchor"]

