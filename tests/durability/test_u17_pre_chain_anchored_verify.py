"""u17: `arrowgate log verify` on an intact store from before the consent chain, with its anchor.

tests/data/pre-chain-anchored.sqlite (and its .anchor) were written by the code at
e27f1b1 (engine migrations m001–m003 and canvas m001–m002: the log and its anchor
existed, the consent history was not chained yet): a workspace, two packages, cards,
agents, queued and held prompts, refused calls, a pending update. README ("Durability
and tamper evidence"): `log verify` on such a database before its upgrade (it opens
the file read-only) judges its history as trusted as it stands, "so an intact older
database verifies before and after".
"""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.app.cli import main

DATA = Path(__file__).parent.parent / "data"


def _copy(tmp_path: Path) -> Path:
    path = tmp_path / "old.sqlite"
    shutil.copy(DATA / "pre-chain-anchored.sqlite", path)
    shutil.copy(DATA / "pre-chain-anchored.sqlite.anchor", tmp_path / "old.sqlite.anchor")
    return path


def test_an_anchored_store_from_before_the_consent_chain_verifies_before_its_upgrade(
        tmp_path: Path, capsys) -> None:
    path = _copy(tmp_path)
    code = main(["log", "verify", "--db", str(path)])
    captured = capsys.readouterr()
    # Today: exit 2, "arrowgate: the database cannot be used: no such column: hash".
    assert "no such column" not in captured.err
    assert code == 0, captured.out + captured.err


def test_the_same_store_verifies_after_its_upgrade(tmp_path: Path, capsys) -> None:
    from engine import Engine, World

    path = _copy(tmp_path)
    Engine.open(path, world=World(net=None, fs=None)).close()
    assert main(["log", "verify", "--db", str(path)]) == 0, capsys.readouterr()
