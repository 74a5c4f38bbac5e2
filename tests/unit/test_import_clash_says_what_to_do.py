"""``arrowgate import`` of a canvas whose ids clash with the database's says, on one
line, which id and what to do, exit 2, importing nothing: a workspace that exists is
imported under another with ``--workspace``; a node or arrow id taken is renamed in the
file (ids are unique in the whole app).

(Found in round 31, playing a newcomer importing a canvas twice: "INVALID_ARGUMENT:
workspace 'plan' exists (reason: workspace)", and nothing said of --workspace.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine import Engine
from engine.app.cli import main
from engine.effects.operator import OperatorCheck

_NOTE = {"type": "text", "text": "hi", "x": 0, "y": 0, "width": 10, "height": 10}


@pytest.fixture(autouse=True)
def _a_person_operates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.effects.operator.operator_check", lambda: OperatorCheck(True))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database with workspace ``plan``: notes n1, n2 and arrow e1 between them."""
    path = tmp_path / "app.db"
    engine = Engine.open(path)

    async def build() -> None:
        await engine.create_workspace("plan", str(tmp_path))
        for node in ("n1", "n2"):
            await engine.add_node({"id": node, "type": "note"}, workspace="plan")
        await engine.add_arrow({"id": "e1", "from": "n1", "to": "n2"})

    try:
        asyncio.run(build())
    finally:
        engine.close()
    return path


@pytest.mark.parametrize(("name", "nodes", "edges", "said"), [
    ("plan", ["n7"], [], ["workspace 'plan' exists", "--workspace"]),
    ("other", ["n1"], [], ["'n1'", "another id"]),
    ("other", ["n7", "n8"], [{"id": "e1", "fromNode": "n7", "toNode": "n8"}],
     ["'e1'", "another id"]),
])
def test_a_clash_is_one_line_saying_what_to_do(
        db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
        nodes: list[str], edges: list[dict[str, str]], said: list[str]) -> None:
    """The workspace's, a node's or an arrow's id taken: exit 2, one line naming it and
    the way on; nothing imported (a dry run and a real import alike)."""
    canvas = tmp_path / f"{name}.canvas"
    canvas.write_text(json.dumps({"nodes": [{"id": n, **_NOTE} for n in nodes],
                                  "edges": edges}))
    for how in (["--dry-run"], ["--review-sha256", "0" * 64]):
        code = main(["import", str(canvas), "--db", str(db), *how])
        out, err = capsys.readouterr()
        assert (code, out, err.count("\n")) == (2, "", 1), (how, err)
        assert all(words in err for words in said), (how, err)
