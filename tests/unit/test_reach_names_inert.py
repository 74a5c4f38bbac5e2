"""`arrowgate reach` prints every name inert (`engine.core.text.visible`): an agent or
terminal name from an imported JSON Canvas file that holds terminal escape sequences
(clear the screen, set the window title) or a bidi override cannot restyle the
terminal or reorder what a person audits, as in `log show` and `hold list`.

(Found by a helper: reach, the command that audits what a card can cause, printed
such names raw.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from engine import Engine, World, file_digests
from tests.unit.cli_process import run

NAME = "Build bot\x1b[2J\x1b]0;owned\x07\u202etxt.exe"


def _canvas(path: Path) -> None:
    async def build() -> None:
        engine = Engine.open(path, world=World(net=None, fs=None))
        try:
            manifest = {"name": "acme.x", "version": "1.0.0",
                        "permissions": {"agents.prompt": {}, "terminals.write": {}}}
            await engine.offer("acme.x", manifest,
                               file_digests({"manifest.json": json.dumps(manifest)}))
            await engine.install("acme.x", by="operator")
            box = {"x": 0, "y": 0, "width": 10, "height": 10}
            doc = {"nodes": [{"id": i, "type": "text", "text": i, **box}
                             for i in ("c1", "a1", "t1")],
                   "edges": [{"id": "e1", "fromNode": "c1", "toNode": "a1", "toEnd": "none"},
                             {"id": "e2", "fromNode": "c1", "toNode": "t1", "toEnd": "none"}],
                   "arrowgate": {"version": 1, "nodes": {
                       "c1": {"type": "card", "package": "acme.x"},
                       "a1": {"type": "agent", "name": NAME},
                       "t1": {"type": "terminal", "name": NAME}}}}
            await engine.import_canvas("shared", path.parent, doc)
        finally:
            engine.close()

    asyncio.run(build())


def test_reach_prints_imported_names_inert(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    _canvas(db)
    done = run("reach", "c1", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "c1 -prompt-> a1" in done.stdout  # the analysis ran
    for ch in ("\x1b", "\x07", "\u202e"):
        assert ch not in done.stdout, f"{ch!r} printed raw: {done.stdout!r}"
    assert "Build bot\u241b[2J" in done.stdout  # shown, as its control picture
