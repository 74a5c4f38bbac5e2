"""A manifest, a case or a canvas file names each key of an object once; one naming a
key twice is refused with the key named, and nothing is offered, played or imported.

JSON leaves an object that names a key twice to its reader: Python and
JavaScript keep the last value, other readers the first or refuse it. A
manifest sent for review could so read as one package to a person (or a tool)
looking at its first ``"name"`` and ``"permissions"``, and install as another
with what its second ones say; a case's second ``expect`` silently replaced
the one its author wrote. Every file the command line is given is read with
each key once (`engine.core.uniquekeys`).
(Found in round 20: ``{"permissions": {"fs.read": {}}, "permissions": {}}`` was
reviewed as asking for nothing; a canvas and a case with a key twice were read.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from engine.app import cli_write
from engine.app.casefile import CaseInvalid, load_case
from engine.app.cli import main
from engine.effects import operator

TWICE = '{"name": "acme.x", "version": "1.0.0", "permissions": {"fs.read": {}}, ' \
        '"permissions": {}}'
INNER_TWICE = '{"name": "acme.x", "version": "1.0.0", ' \
              '"permissions": {"fs.read": {"optional": true}, "fs.read": {}}}'


@pytest.fixture
def person(monkeypatch: pytest.MonkeyPatch) -> None:
    """A person at the terminal: the verbs that need one run."""
    ok = lambda **_: operator.OperatorCheck(True)  # noqa: E731
    monkeypatch.setattr(operator, "operator_check", ok)
    monkeypatch.setattr(cli_write, "operator_check", ok)


@pytest.mark.parametrize("text", [TWICE, INNER_TWICE])
def test_review_refuses_a_manifest_naming_a_key_twice(
        tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(text)
    assert main(["review", str(path)]) == 2
    err = capsys.readouterr().err
    assert "MANIFEST_INVALID" in err and "twice" in err, err
    assert '"permissions"' in err or '"fs.read"' in err, err


def test_diff_refuses_a_manifest_naming_a_key_twice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "old.json").write_text(TWICE.replace(', "permissions": {}', ""))
    (tmp_path / "new.json").write_text(TWICE)
    assert main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 2
    assert "twice" in capsys.readouterr().err


def test_package_offer_of_a_folder_whose_manifest_names_a_key_twice_offers_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], person: None) -> None:
    db = tmp_path / "a.db"
    assert main(["workspace", "add", "w", str(tmp_path), "--db", str(db)]) == 0
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "manifest.json").write_text(TWICE)
    assert main(["package", "offer", str(folder), "--db", str(db)]) == 2
    assert "twice" in capsys.readouterr().err
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from packages").fetchone() == (0,)


def test_a_case_naming_a_key_twice_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "case.json"
    path.write_text('{"name": "c", "steps": [{"do": "history", "expect": {"ok": true}, '
                    '"expect": {"error": "X"}}]}')
    with pytest.raises(CaseInvalid, match='the key "expect" appears twice'):
        load_case(path)


def test_an_import_of_a_canvas_naming_a_key_twice_creates_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], person: None) -> None:
    path = tmp_path / "board.canvas"
    node = '{"id": "a", "type": "text", "text": "x", "x": 0, "y": 0, "width": 1, "height": 1}'
    path.write_text(f'{{"nodes": [{node}], "edges": [], "nodes": []}}')
    db = tmp_path / "a.db"
    assert main(["import", str(path), "--db", str(db), "--workspace", "w"]) == 2
    assert "twice" in capsys.readouterr().err
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert conn.execute("select count(*) from workspaces").fetchone() == (0,)
