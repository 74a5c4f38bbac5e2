"""A database this code cannot use — one a newer arrowgate migrated (``schema-mismatch``)
— is unusable input on every verb, exit 2, as the read verbs already say: never the
exit 1 of a refusal or a finding, which a script would read as "the store refused" or
"the store is tampered with".

(Found in round 25: the write verbs' ``--db`` (``hold list``, ``call``, ``package
review``, ``node remove``) answered such a database with exit 1, the read verbs and
``reach`` with 2.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects.operator import OperatorCheck
from tests.durability.test_store_ahead_of_code_refused import _store_from_a_newer_engine

VERBS = [["log", "show"], ["log", "verify"], ["reach", "c1"], ["export"], ["hold", "list"],
         ["call", "c1", "agents.list"], ["package", "review", "acme.x"],
         ["node", "remove", "n1"], ["hold", "reject", "p1"], ["arrow", "remove", "e1"]]


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_a_database_of_a_newer_engine_is_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        verb: list[str]) -> None:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    db = _store_from_a_newer_engine(tmp_path)
    before = db.read_bytes()
    assert main([*verb, "--db", str(db)]) == 2
    assert "newer engine" in capsys.readouterr().err
    if "--json" not in verb and verb[0] not in ("log", "reach", "export"):
        assert main([*verb, "--db", str(db), "--json"]) == 2
        assert json.loads(capsys.readouterr().err)["error"]["reason"] == "schema-mismatch"
    assert db.read_bytes() == before
