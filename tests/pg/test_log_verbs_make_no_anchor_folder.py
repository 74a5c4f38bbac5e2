"""`arrowgate log show|export|verify --store URL` only read: on a machine that never wrote
an anchor of the store they make no folder for one (the anchors' folder beside the default
database), as on SQLite they make no file beside the database; and they read a store from
a machine whose data folder they cannot write.

(Found in round 25: each made ``anchors/`` under the data folder, and could not read at
all where that folder could not be made.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine import Engine, World
from engine.app.cli import main
from engine.store.logindex import verify_path


def _store(dsn: str, home: Path) -> None:
    """A store with a few log rows, its anchor written under ``home``."""
    engine = Engine.open(store=dsn, world=World(net=None, fs=None))
    try:
        asyncio.run(engine.create_workspace("w", str(home)))
        for _ in range(2):
            asyncio.run(engine.call("ghost", "agents.list"))
    finally:
        engine.close()


@pytest.mark.parametrize("verb", [["show"], ["export"], ["verify"], ["verify", "--json"]])
def test_a_log_verb_makes_no_anchor_folder(pg_dsn: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str],
                                           verb: list[str]) -> None:
    monkeypatch.setenv("ARROWGATE_DB", str(tmp_path / "writer" / "app.db"))
    _store(pg_dsn, tmp_path)
    assert (tmp_path / "writer" / "anchors").is_dir()
    monkeypatch.setenv("ARROWGATE_DB", str(tmp_path / "reader" / "app.db"))
    assert main(["log", verb[0], "--store", pg_dsn, *verb[1:]]) == 0, capsys.readouterr()
    assert not (tmp_path / "reader").exists(), "a read made the anchors' folder"


def test_the_verifier_makes_no_anchor_folder(pg_dsn: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARROWGATE_DB", str(tmp_path / "writer" / "app.db"))
    _store(pg_dsn, tmp_path)
    monkeypatch.setenv("ARROWGATE_DB", str(tmp_path / "reader" / "app.db"))
    assert verify_path(pg_dsn).ok
    assert not (tmp_path / "reader").exists()
