"""The consent history is hash-chained and `log verify` checks it (SPEC §8, issue 15 #9)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine import Engine, World
from engine.app.cli import main
from engine.store.database import open_database
from engine.store.history import ConsentHistory
from engine.store.migrations import migrations
from tests.durability.targets import Statement, Target


def _verify(db: Path | Target, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["log", "verify", *(db.args() if isinstance(db, Target) else ["--db", str(db)])])
    return code, capsys.readouterr().out


def _sql(db: Path, *statements: str) -> None:
    conn = sqlite3.connect(db)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def test_an_untouched_history_verifies(consented: Target, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    """Every entry links to the one before; the grants match the newest entry."""
    code, out = _verify(consented, capsys)
    assert code == 0, out
    engine = consented.open()
    entries = engine.history.entries()
    assert len(entries) > 8 and all(e["hash"] and e["prev"] for e in entries)
    assert entries[1]["prev"] == entries[0]["hash"]
    assert engine.verify_log().ok
    engine.close()


def test_a_grant_inserted_by_hand_is_a_finding(consented: Target,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A row put into the grants table outside the engine: verify fails, and so does
    `engine.verify_log()`."""
    # "by" is a reserved word in PostgreSQL; quoted, both stores take it.
    consented.execute('insert into grants (package, permission, t, "by") values '
                      "('acme.prompter', 'clipboard.write', 0, 'operator')")
    code, out = _verify(consented, capsys)
    assert code == 1 and "grants differ" in out, out
    engine = consented.open()
    result = engine.verify_log()
    engine.close()
    assert not result.ok and "grants differ" in result.problem


@pytest.mark.parametrize("kind, tamper, needle", [
    ("entry appended by hand",
     # SQLite numbers the row itself; PostgreSQL's seq has no default (the engine
     # numbers rows under the store's write lock), so the forger numbers it.
     {"sqlite": "insert into consent (t, principal, action, subject, accepted, detail) values "
                "(0, 'operator', 'grant', '{}', 1, '')",
      "postgresql": "insert into consent (seq, t, principal, action, subject, accepted, detail)"
                    " values ((select max(seq) + 1 from consent), 0, 'operator', 'grant',"
                    " '{}', 1, '')"}, "does not link"),
    ("principal rewritten",
     "update consent set principal = 'operator' where principal = 'agent:a1'", "hash"),
    ("entry removed", "delete from consent where seq = 3", "expected number 3"),
    pytest.param("blob in an entry", "update consent set detail = x'00ff' where seq = 2",
                 "cannot be read", marks=pytest.mark.sqlite_only(
                     "a column of a SQLite file holds any type; PostgreSQL's text column "
                     "refuses a bytea value, so this tampering cannot happen there")),
])
def test_history_tampering_is_found(consented: Target, capsys: pytest.CaptureFixture[str],
                                    kind: str, tamper: Statement, needle: str) -> None:
    """Each kind of tampering with the history is a finding naming what is wrong."""
    consented.execute(tamper)
    code, out = _verify(consented, capsys)
    assert code == 1 and "consent history" in out and needle in out, (kind, out)


# SQLite only by construction: it opens an old SQLite file at a past migration
# (PostgreSQL's migration chain starts hashed: tests/pg/test_schema.py).
def test_an_old_database_migrates_into_a_chain(db_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Entries written before the chain existed are hashed in order by the migration;
    later changes extend the chain, and a hand-made grant is then a finding."""
    db = open_database(db_path)
    migrations.apply(db, stop_before="m004_consent_chain")
    for i, action in enumerate(("install", "grant")):
        db.execute("insert into consent (t, principal, action, subject, accepted, code, reason,"
                   " detail) values (?, 'operator', ?, ?, 1, null, null, '')",
                   [1000.0 + i, action, json.dumps({"package": "acme.old"})])
    db.execute("insert into grants (package, permission, t, by) values "
               "('acme.old', 'usage.read', 1000, 'operator')")
    db.conn.commit()
    db.close()
    engine = Engine.open(db_path, world=World(net=None, fs=None))
    entries = ConsentHistory(engine.db).entries()
    assert [e["seq"] for e in entries] == [1, 2] and all(e["hash"] for e in entries)
    assert engine.verify_log().ok
    engine.close()
    code, out = _verify(db_path, capsys)
    assert code == 0, out
    _sql(db_path, "insert into grants (package, permission, t, by) values "
                  "('acme.old', 'fs.write', 1000, 'operator')")
    code, out = _verify(db_path, capsys)
    assert code == 1 and "grants differ" in out, out
