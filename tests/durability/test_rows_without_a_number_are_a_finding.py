"""Log rows whose sequence number is no integer (NULL, text) are a finding for `log verify`,
never a traceback.

SQLite keeps ``seq`` as the row's id, so no UPDATE can put anything but an
integer there; a file whose schema was edited (``PRAGMA writable_schema``) can
hold anything in it, and `log verify` must still name the damage.

Found in round 22: with the log's schema edited so that ``seq`` read NULL,
``log verify`` died in ``ArrowLog.last`` with ``TypeError: int() argument must
be ... not 'NoneType'`` (a traceback, exit 1 as if it were a finding).
"""

from __future__ import annotations

import sqlite3

import pytest

from engine.app.cli import main
from tests.durability.targets import Target

#: Why these tests run on SQLite alone.
TYPED = ("PostgreSQL's log.seq is a bigint primary key: it holds neither NULL nor text, "
         "whatever is done to the table short of changing its type")


@pytest.fixture
async def logged(world, target: Target) -> Target:
    """A log of 4 rows in the store, the engine closed."""
    for i in range(4):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    return target


def _unalias(db: object, then: str = "") -> None:
    """Make ``seq`` a plain column (no longer the row's id): the rows' ``seq`` read NULL."""
    conn = sqlite3.connect(str(db))
    conn.execute("pragma writable_schema = 1")
    conn.execute("update sqlite_master set sql = replace(sql, 'seq integer primary key', "
                 "'seq integer') where name = 'log'")
    conn.commit()
    conn.close()
    if then:
        conn = sqlite3.connect(str(db))
        conn.execute(then)
        conn.commit()
        conn.close()


@pytest.mark.sqlite_only(TYPED)
@pytest.mark.parametrize("kind, then", [
    ("every number NULL", ""),
    ("the newest number text", "update log set seq = 'four' where rowid = 4"),
])
def test_rows_without_a_number_are_a_finding(logged: Target,
                                            capsys: pytest.CaptureFixture[str],
                                            kind: str, then: str) -> None:
    """Exit 1 with a finding on a row, no traceback."""
    _unalias(logged.db, then)
    code = main(["log", "verify", *logged.args()])
    out = capsys.readouterr().out
    assert code == 1, (kind, out)
    assert "FAILED" in out and "sequence number" in out, (kind, out)
