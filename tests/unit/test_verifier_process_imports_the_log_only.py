"""The verifier process imports the log, its anchor and the consent history, not the store.

Rule: the TUI and the service verify a log in a process of their own (``python -P -m
engine.store.logindex``, `engine.app.verifier`), started for every verification asked
for. What it does is read the log, the anchor and the consent history; importing the
canvas, the manifests (pydantic) or sqlite-utils as well cost it about three times the
processor time of its work on a small log (round 36: 0.37 s of user time against 0.13).
So neither importing its module nor verifying a store may load them.

A test of what is imported, not of how long it takes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from engine import Engine

#: What the verifier has no use for: the whole store, the canvas and the manifests.
NOT_FOR_THE_VERIFIER = ("canvas", "engine.core.manifest", "engine.core.events",
                        "engine.store.sqlite", "engine.store.canvas",
                        "engine.store.transactions", "pydantic", "sqlite_utils")

ROOT = Path(__file__).resolve().parents[2]


def _loaded(code: str, *args: str) -> tuple[str, list[str]]:
    """What ``code`` printed before its modules, and the modules loaded (top-level and
    those named in `NOT_FOR_THE_VERIFIER`), in a fresh ``python -P``."""
    out = subprocess.run([sys.executable, "-P", "-c", code + (
        "\nimport sys, json\n"
        "print(json.dumps(sorted(sys.modules)))\n"), *args],
        capture_output=True, text=True, cwd=ROOT, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.splitlines()
    modules = json.loads(out[-1])
    return "\n".join(out[:-1]), [m for m in modules if m.split(".")[0] in (
        "canvas", "pydantic", "sqlite_utils") or m in NOT_FOR_THE_VERIFIER]


def test_importing_the_verifier_loads_neither_the_canvas_nor_the_manifests() -> None:
    """``import engine.store.logindex`` loads no canvas, manifest, pydantic or sqlite-utils."""
    _said, loaded = _loaded("import engine.store.logindex")
    assert loaded == []


async def test_verifying_a_store_loads_neither_the_canvas_nor_the_manifests(
        world: Engine, db_path: Path) -> None:
    """The verifier's whole run on a store with rows and consent history loads none either."""
    # GIVEN a store with log rows, consent history and its anchor
    for i in range(3):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    # WHEN the verifier process's main runs on it
    said, loaded = _loaded("import sys\nfrom engine.store.logindex import main\n"
                           "main([sys.argv[1]])", str(db_path))
    # THEN it found the log whole, having loaded nothing of the rest of the store
    assert json.loads(said) == {"ok": True, "rows": 3, "first_bad": None, "problem": ""}
    assert loaded == []
