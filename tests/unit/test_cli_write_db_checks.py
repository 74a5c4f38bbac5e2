"""The write verbs' ``--db`` is checked like every other verb's (engine.app.common.db_path).

(Found by a hostile review, round 14, when it did not hold: the write verbs' ``--db`` is checked like every other verb's (engine.app.common.db_path).)

`engine.app.common.db_path` refuses a file that is not an arrowgate database
"so a typo can never turn into tables written into the wrong file" (exit 2,
naming the path). The write verbs (`engine.app.cli_write._backend`) only ask
whether the path exists, then `Engine.open` it: another program's SQLite file
gets arrowgate's tables written into it, and a text file is exit 1
(STORE_FAILED, "a refusal") instead of exit 2 (invalid input).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine.app.cli import main
from engine.effects.operator import OperatorCheck


def _tables(db: Path) -> list[str]:
    con = sqlite3.connect(db)
    try:
        return sorted(r[0] for r in con.execute("select name from sqlite_master"))
    finally:
        con.close()


@pytest.mark.parametrize("argv", [
    ["node", "remove", "n1"],
    ["arrow", "remove", "e1"],
    ["package", "revoke", "acme.x", "network"],
    ["hold", "reject", "p1"],
    ["call", "c1", "agents.prompt", "a1", "--args", "{}"],
])
def test_another_programs_sqlite_file_is_refused_and_left_alone(tmp_path, capsys, argv,
                                                                monkeypatch) -> None:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    other = tmp_path / "photos.db"
    con = sqlite3.connect(other)
    con.execute("create table albums (id integer primary key, name text)")
    con.commit()
    con.close()
    before = other.read_bytes()
    code = main([*argv, "--db", str(other), "--json"])
    _out, err = capsys.readouterr()
    assert _tables(other) == ["albums"], "arrowgate tables were written into another file"
    assert other.read_bytes() == before
    assert code == 2, err
    assert str(other) in json.loads(err)["error"]["message"]


def test_a_text_file_as_db_is_invalid_input(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    code = main(["node", "remove", "n1", "--db", str(notes), "--json"])
    _out, err = capsys.readouterr()
    assert notes.read_text() == "hello\n"
    assert code == 2, err  # invalid input, as `log show --db` says it (db_path), not a refusal
    json.loads(err)


@pytest.mark.parametrize("argv", [
    ["node", "add", "w1", "n1", "note"],
    ["call", "c1", "agents.list"],
    ["hold", "list"],
    ["log", "show"],
])
def test_a_missing_database_names_the_verb_that_makes_an_empty_one(tmp_path, capsys,
                                                                  monkeypatch, argv) -> None:
    """GIVEN no database at --db WHEN a verb needs one THEN exit 2 naming the path and
    both ways to make one: ``workspace add`` (an empty canvas: where a script building its
    own begins) and ``demo`` (the demo's canvas), each with that --db; nothing made.

    (Found in round 28: only ``arrowgate demo --db F`` was named, which fills the
    database with the demo's packages, nodes and arrows.)"""
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    db = tmp_path / "my app.db"
    assert main([*argv, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"no database at {db}" in err, err
    assert f"`arrowgate workspace add ID FOLDER --db '{db}'`" in err, err
    assert f"`arrowgate demo --db '{db}'`" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


#: A PostgreSQL store's URL, as README "A shared canvas on PostgreSQL" writes it.
PG_URL = "postgresql://arrowgate@db.example/arrowgate"


@pytest.mark.parametrize("argv", [
    ["log", "show"], ["log", "verify"], ["reach", "c1"], ["export"], ["hold", "list"],
    ["node", "add", "w1", "n1", "note"], ["call", "c1", "agents.list"],
    ["workspace", "add", "w1", "{folder}"], ["demo", "--no-tui"], ["upgrade"],
    ["mcp", "--agent", "a1"],
])
def test_a_postgresql_url_given_as_db_is_refused_naming_store(tmp_path, capsys, monkeypatch,
                                                             argv) -> None:
    """GIVEN a PostgreSQL URL passed as ``--db`` (where ``--store`` was meant) WHEN any
    verb runs THEN exit 2 naming the URL and ``--store``, and nothing made: no SQLite
    database at the path the URL reads as (``postgresql:/…`` in the current folder).

    (Found in round 28: ``serve``, ``demo`` and ``workspace add`` made a fresh SQLite
    database in a folder named ``postgresql:`` and served it — a team believing itself
    on its shared store was on a file of its own — and the other verbs said no database
    was there, suggesting commands that would make one.)"""
    monkeypatch.setattr("engine.app.cli_write.operator_check", lambda: OperatorCheck(True))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "proj").mkdir()
    filled = [a.format(folder=tmp_path / "proj") for a in argv]
    assert main([*filled, "--db", PG_URL]) == 2
    err = capsys.readouterr().err
    assert PG_URL in err and "--store" in err, err
    assert len(err.splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"]


def test_serve_refuses_a_postgresql_url_given_as_db(tmp_path) -> None:
    """``arrowgate serve --db URL``: exit 2 naming --store, nothing served or made."""
    import subprocess
    import sys

    arrowgate = str(Path(sys.executable).with_name("arrowgate"))
    try:
        done = subprocess.run([arrowgate, "serve", "--db", PG_URL, "--listen", "127.0.0.1:0"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as served:
        raise AssertionError(f"served a database of its own: {served.stdout!r}") from None
    assert done.returncode == 2 and "--store" in done.stderr, done
    assert list(tmp_path.iterdir()) == []


def test_a_postgresql_url_given_as_db_is_told_without_its_password(tmp_path, capsys,
                                                                  monkeypatch) -> None:
    """The refusal names the URL as the store's errors do: its password as ``***``."""
    monkeypatch.chdir(tmp_path)
    for argv in (["log", "show", "--db", "postgresql://ag:s3cret@db.example/ag"],
                 ["hold", "list", "--db", "postgresql://ag:s3cret@db.example/ag", "--json"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "s3cret" not in err and "postgresql://ag:***@db.example/ag" in err, err
    monkeypatch.setenv("ARROWGATE_DB", "postgresql://ag:s3cret@db.example/ag")
    assert main(["log", "show"]) == 2
    err = capsys.readouterr().err
    assert "s3cret" not in err and "$ARROWGATE_DB" in err, err
