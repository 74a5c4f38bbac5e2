"""A database file whose name is not UTF-8 (a file may be named with any bytes) opens as
any other: the engine finds its own file's name as the bytes it is, so the verbs work on
it (and ``log verify`` finds its anchor beside it) — never "Could not decode to UTF-8",
exit 1, with a half-made database left behind by ``demo``.

(Found in round 25: `database_file` read SQLite's name of the file as UTF-8 text.)
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main


def test_an_engine_opens_a_database_named_in_bytes_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / os.fsdecode(b"app\xff.db")
    engine = Engine.open(path)
    try:
        asyncio.run(engine.create_workspace("w1", str(tmp_path)))
        asyncio.run(engine.call("ghost", "agents.list"))
    finally:
        engine.close()
    assert Path(f"{path}.anchor").exists()
    again = Engine.open(path)
    try:
        assert "w1" in again.state.workspaces
    finally:
        again.close()


def test_the_verbs_read_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / os.fsdecode(b"app\xfe.db")
    Engine.open(path).close()
    for verb in (["log", "verify"], ["log", "show"], ["export", "--workspace", "w"],
                 ["hold", "list"]):
        code = main([*verb, "--db", str(path)])
        err = capsys.readouterr().err
        assert "decode" not in err, (verb, err)
        assert code in (0, 2) and (code == 0 or "no workspace" in err), (verb, code, err)
