"""The verifier process the TUI and the service start imports arrowgate's own code, never a
module of the same name in the folder they run in.

Rule: `engine.app.verifier.verify_in_a_process` starts ``python -m engine.store.logindex``;
``-m`` would put the working folder first on the child's import path, and the working
folder may be a workspace a card writes in (``fs.write``). A card that wrote
``engine/store/logindex.py`` there would run as the person when they pressed "verify". The
child is started with ``-P`` (Python 3.11: no unsafe path first), so the folder is not on
its path at all.

(Found in round 22, reading the verifier's new home: the TUI's inline verifier had the same
hole.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import Engine, World
from engine.app.verifier import verify_in_a_process


def test_a_planted_module_in_the_working_folder_never_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "a.db"
    Engine.open(db, world=World(net=None, fs=None)).close()
    planted = tmp_path / "workspace"
    (planted / "engine" / "store").mkdir(parents=True)
    marker = tmp_path / "ran"
    for package in (planted / "engine", planted / "engine" / "store"):
        (package / "__init__.py").write_text("")
    (planted / "engine" / "store" / "logindex.py").write_text(
        f"open({str(marker)!r}, 'w').write('planted')\n"
        "print('{\"ok\": true, \"rows\": 999, \"first_bad\": null, \"problem\": \"\"}')\n")
    monkeypatch.chdir(planted)
    result = asyncio.run(verify_in_a_process(str(db)))
    assert not marker.exists(), "the card's module ran"
    assert result.ok and result.rows == 0, result
