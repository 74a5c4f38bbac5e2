"""``arrowgate workspace add`` refused on a database it would have made leaves no
database and no folder behind: a refusal changes nothing (README, "Command line").

(Found in round 31, playing a newcomer: `workspace add w1 ~/projct --db new.db` with a
typo'd folder said INVALID_ARGUMENT, exit 2, and left new.db, 200 KB with every table,
and the folders made for it.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects.operator import OperatorCheck


@pytest.fixture(autouse=True)
def _a_person_operates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))


@pytest.mark.parametrize(("workspace", "folder", "extra", "said"), [
    ("w1", "no-such-folder", [], "does not exist"),
    ("bad/id", ".", [], "bad-id"),
    ("w1", ".", ["--settings", '{"card_cap": 0}'], "card_cap"),
    ("w1", ".", ["--settings", "{not json"], "--settings"),
])
def test_a_refused_workspace_add_leaves_no_new_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], workspace: str, folder: str,
        extra: list[str], said: str) -> None:
    """Refused (a missing folder, a bad id, bad settings), the verb leaves neither the
    database it would have made nor its folders."""
    # GIVEN a database that does not exist yet, in folders that do not either
    db = tmp_path / "new" / "deeper" / "app.db"
    # WHEN the first workspace add on it is refused
    code = main(["workspace", "add", workspace, str(tmp_path / folder), *extra,
                 "--db", str(db)])
    # THEN it says why, and nothing was made
    err = capsys.readouterr().err
    assert code == 2, err
    assert said in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a refusal made files"


def test_a_workspace_add_done_keeps_its_new_database(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The same verb that succeeds makes the database and keeps it."""
    db = tmp_path / "new" / "app.db"
    assert main(["workspace", "add", "w1", str(tmp_path), "--db", str(db)]) == 0
    assert "workspace w1 added" in capsys.readouterr().out
    assert db.is_file()
