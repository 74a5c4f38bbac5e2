"""A file of arrowgate's own that is no database, named as ``--db`` (an exported log, a
JSON Canvas file), is said to be what it is, with the verb that reads it: one line,
exit 2, nothing written.

(Found in round 31, playing a newcomer who exported the log and tried to verify the
export: `log verify --db log.jsonl` said "not a database (not an SQLite file)", and
nothing of how an export is checked.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine import Engine, file_digests
from engine.app.cli import main


@pytest.fixture
def exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """An export of a log with a row (a prompt, with a long text), and a JSON Canvas file
    of the same canvas."""
    db = tmp_path / "app.db"
    engine = Engine.open(db)
    manifest = {"name": "acme.p", "version": "1.0.0",
                "permissions": {"agents.prompt": {}}}

    async def build() -> None:
        await engine.create_workspace("w1", str(tmp_path))
        await engine.offer("acme.p", manifest, file_digests({"m": json.dumps(manifest)}))
        await engine.install("acme.p", by="operator")
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
        await engine.call("c1", "agents.prompt", "a1", {"text": "x" * 8000})

    try:
        asyncio.run(build())
    finally:
        engine.close()
    assert main(["log", "export", "--db", str(db)]) == 0
    export = tmp_path / "log.jsonl"
    export.write_text(capsys.readouterr().out)
    assert export.read_text().count("\n") == 1
    canvas = tmp_path / "plan.canvas"
    assert main(["export", "--db", str(db), "-o", str(canvas)]) == 0
    return export


@pytest.mark.parametrize(("name", "said"), [
    ("log.jsonl", ["an exported log", "Verifying an exported log"]),
    ("plan.canvas", ["a JSON Canvas file", "arrowgate import"]),
])
def test_a_file_of_arrowgates_named_as_db_is_told_what_it_is(
        exported: Path, capsys: pytest.CaptureFixture[str], name: str,
        said: list[str]) -> None:
    """``log verify --db`` an export or a canvas file: exit 2, one line saying what the
    file is and what reads it; the file as it was."""
    path = exported.parent / name
    before = path.read_bytes()
    code = main(["log", "verify", "--db", str(path)])
    out, err = capsys.readouterr()
    assert (code, out, err.count("\n")) == (2, "", 1), err
    assert "not a database" in err and all(words in err for words in said), err
    assert path.read_bytes() == before
