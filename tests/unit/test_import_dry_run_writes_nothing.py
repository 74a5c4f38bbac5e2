"""``arrowgate import --dry-run`` needs no consent, writes nothing and creates nothing.

A dry run only shows the review an import would draw and its sha256: it gives no
consent, so it needs no person at a terminal (a script runs it, and a person
reads its review later), and it leaves the disk as it found it: no database
file, no folder for one, no ``-wal`` or ``-shm`` file, no byte of an existing
database changed. The review is the one the real database would give (a
workspace id already taken is refused there as it is by the import).

(Found in round 24: the operator check ran first, so a dry run without a terminal
was refused (exit 1); and it opened the engine with ``create=True``, so a dry run on
a path with no database made the database and its folder.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from engine import Engine
from tests.unit.cli_process import run


def _doc() -> dict[str, Any]:
    box = {"x": 0, "y": 0, "width": 10, "height": 10}
    return {"nodes": [{"id": "a1", "type": "text", "text": "a", **box},
                      {"id": "n1", "type": "text", "text": "note", **box}],
            "edges": [{"id": "e1", "fromNode": "a1", "toNode": "n1"}],
            "arrowgate": {"version": 1, "nodes": {"a1": {"type": "agent"},
                                                  "n1": {"type": "note"}}}}


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_dry_run_without_a_terminal_creates_no_database(tmp_path: Path) -> None:
    board = tmp_path / "board.canvas"
    board.write_text(json.dumps(_doc()))
    db = tmp_path / "data" / "a.db"
    done = run("import", str(board), "--db", str(db), "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["imported"] is False and len(answer["review_sha256"]) == 64
    assert any("e1" in line for line in answer["review"])
    assert not (tmp_path / "data").exists(), "a dry run made the database's folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.canvas"]


def test_a_dry_run_on_a_database_changes_no_byte_of_it(tmp_path: Path) -> None:
    board = tmp_path / "board.canvas"
    board.write_text(json.dumps(_doc()))
    data = tmp_path / "data"
    db = data / "a.db"
    engine = Engine.open(db)
    engine.close()
    before = _tree(data)
    done = run("import", str(board), "--db", str(db), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "e1" in done.stdout and "nothing was imported" in done.stdout
    assert _tree(data) == before, "a dry run wrote or created files beside the database"


def test_a_dry_run_reviews_against_the_database_there(tmp_path: Path) -> None:
    board = tmp_path / "board.canvas"
    board.write_text(json.dumps(_doc()))
    db = tmp_path / "a.db"
    engine = Engine.open(db)
    try:
        asyncio.run(engine.create_workspace("w", str(tmp_path)))
    finally:
        engine.close()
    before = _tree(tmp_path)
    done = run("import", str(board), "--db", str(db), "--workspace", "w", "--dry-run")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "w" in done.stderr and not done.stdout
    assert _tree(tmp_path) == before


def test_a_no_to_the_import_creates_no_database(tmp_path: Path, monkeypatch: Any,
                                                capsys: Any) -> None:
    """The question comes with the review made on a copy: a "no", or standard input at
    its end, leaves no database behind either."""
    import io

    from engine.app.cli import main
    from engine.effects import operator

    board = tmp_path / "board.canvas"
    board.write_text(json.dumps(_doc()))
    monkeypatch.setattr(operator, "operator_check", lambda: operator.OperatorCheck(True))
    for answer in ("n\n", ""):
        monkeypatch.setattr("sys.stdin", io.StringIO(answer))
        code = main(["import", str(board), "--db", str(tmp_path / "data" / "a.db")])
        out, err = capsys.readouterr()
        assert code == 1 and "[y/N]" in out and "not confirmed" in err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["board.canvas"]
