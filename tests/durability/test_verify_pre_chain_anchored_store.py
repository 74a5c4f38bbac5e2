"""An intact anchored store from before the consent chain verifies, before and after its upgrade.

tests/data/pre-chain-anchored.sqlite (and its .anchor) were written by the code at
e27f1b1 (engine migrations m001–m003 and canvas m001–m002: the log and its anchor
existed, the consent history was not chained yet): a workspace, two packages, cards,
agents, queued and held prompts, refused calls, a pending update. README ("Durability
and tamper evidence"): `log verify` on such a database before its upgrade (it opens
the file read-only) judges its history as trusted as it stands, "so an intact older
database verifies before and after". An anchor of that age does not record the
history's head; one that does, beside a history without its chain, is a finding.
(Found by a helper: `log verify` exited 2, "no such column: hash", as it asked the
unchained history for its newest entry's hash.)
"""

from __future__ import annotations

import json
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
    assert "no such column" not in captured.err
    assert code == 0, captured.out + captured.err


def test_the_same_store_verifies_after_its_upgrade(tmp_path: Path, capsys) -> None:
    from engine import Engine, World

    path = _copy(tmp_path)
    Engine.open(path, world=World(net=None, fs=None)).close()
    assert main(["log", "verify", "--db", str(path)]) == 0, capsys.readouterr()


def test_an_anchor_recording_the_history_beside_an_unchained_history_is_a_finding(
        tmp_path: Path, capsys) -> None:
    """Only an engine that chained the history records its head in the anchor."""
    path = _copy(tmp_path)
    anchor = tmp_path / "old.sqlite.anchor"
    state = json.loads(anchor.read_text())
    state["history"] = {"seq": 3, "hash": "0" * 64}
    state["history_pending"] = None
    anchor.write_text(json.dumps(state))
    code = main(["log", "verify", "--db", str(path)])
    captured = capsys.readouterr()
    assert code != 0, captured.out
    assert "no hash chain" in captured.out + captured.err, captured.out + captured.err
