"""A relative ``--db`` that names no database is told with the absolute path it was read
as, since the current folder may not be the one the person thinks; and `arrowgate mcp`,
which an agent starts in a folder of its own, says to give the served database's absolute
path rather than how to make a new database.

(Found in round 34: `arrowgate mcp --agent a1 --db app.db`, started where app.db is not,
said "no database at app.db (`arrowgate workspace add ID FOLDER --db app.db` makes one
…)": neither where it had looked nor that a new database is no way to the served one.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.cli import main


def test_a_relative_db_is_named_with_its_absolute_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN a folder without app.db WHEN a verb reads --db app.db THEN exit 2 naming
    app.db and the absolute path it was read as, with the ways to make one."""
    monkeypatch.chdir(tmp_path)
    assert main(["log", "show", "--db", "app.db"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"arrowgate: no database at app.db, that is {tmp_path / 'app.db'} "
                          "(`arrowgate workspace add ID FOLDER --db app.db` makes one"), err


def test_an_absolute_db_is_named_once(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """An absolute path is named as given, nothing added."""
    missing = tmp_path / "app.db"
    assert main(["log", "show", "--db", str(missing)]) == 2
    assert capsys.readouterr().err.startswith(f"arrowgate: no database at {missing} (`"), \
        "named once"


def test_mcp_says_to_give_the_served_databases_absolute_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """GIVEN an agent's folder without app.db WHEN it starts `arrowgate mcp --db app.db`
    THEN exit 2 naming where it looked and asking for the served database's absolute path,
    never how to make a new database."""
    monkeypatch.chdir(tmp_path)
    assert main(["mcp", "--agent", "a1", "--db", "app.db"]) == 2
    err = capsys.readouterr().err
    assert err == (f"arrowgate: no database at app.db, that is {tmp_path / 'app.db'}: give "
                   "--db the absolute path of the database `arrowgate serve` serves (an "
                   "agent starts its MCP servers in a folder of its own choosing)\n"), err
