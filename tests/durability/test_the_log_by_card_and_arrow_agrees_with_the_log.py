"""`log verify` finds the log's side tables (its rows by card, by arrow) disagreeing with it.

A read by card or by arrow (`log show --card`, an arrow's log in the TUI, the
service's ``GET /v1/log?arrow=``) takes the keyed rows from ``log_cards`` and
``log_arrows`` (`engine.store.logkeys`). An entry removed from them hides its
row from every such read while the chain and the anchor still hold; an entry
moved to another card, or one naming a row that is not there, shows a position
the row does not fill. The engine only ever writes entries that match the log,
so any disagreement is tampering, and `log verify` names the first row it
touches and the table.

Found in round 22: deleting row 3's entry from ``log_cards`` hid that row from
``log show --card`` and the card's views, and ``log verify`` said "ok".
"""

from __future__ import annotations

import pytest

from engine.app.cli import main
from engine.store import transactions
from engine.store.logkeys import keyed_upto
from tests.durability.targets import Target

#: Why these tests run on SQLite alone.
INDEXES_ARE_THE_DATABASES = ("PostgreSQL reads by card and by arrow through indexes on the log "
                             "itself, which the server keeps; there are no side tables to "
                             "disagree with it")


@pytest.fixture
async def keyed(world, target: Target, monkeypatch: pytest.MonkeyPatch) -> Target:
    """A log of 8 rows, keyed in the side tables up to its newest row, the engine closed."""
    monkeypatch.setattr(transactions, "KEYS_EVERY", 2)
    for i in range(8):
        await world.call("c1", "terminals.run", "t1", {"command": f"cmd {i}"})
    world.close()
    return target


def _verify(store: Target, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["log", "verify", *store.args()])
    return code, capsys.readouterr().out


def _keyed(store: Target) -> int:
    import sqlite3

    conn = sqlite3.connect(store.db)
    try:
        return keyed_upto(conn)
    finally:
        conn.close()


@pytest.mark.sqlite_only(INDEXES_ARE_THE_DATABASES)
def test_untouched_side_tables_verify(keyed: Target,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The engine's own side tables agree with the log: no false alarm."""
    assert _keyed(keyed) >= 6
    code, out = _verify(keyed, capsys)
    assert code == 0 and "ok: 8 rows" in out, out


@pytest.mark.sqlite_only(INDEXES_ARE_THE_DATABASES)
@pytest.mark.parametrize("kind, tamper, table", [
    ("row hidden from its card", "delete from log_cards where seq = 3", "log_cards"),
    ("row hidden from its arrow", "delete from log_arrows where seq = 3", "log_arrows"),
    ("row moved to another card", "update log_cards set card = 'c2' where seq = 3", "log_cards"),
    ("entry for a row of another arrow",
     "insert into log_arrows (arrow, seq) values ('elsewhere', 3)", "log_arrows"),
    ("entry past the log's end",
     "insert into log_cards (card, seq) select card, 5 + (select max(seq) from log) from log"
     " where seq = 1; update meta set value = '13' where key = 'log_keyed'", "log_cards"),
])
def test_side_tables_disagreeing_with_the_log_are_a_finding(
        keyed: Target, capsys: pytest.CaptureFixture[str], kind: str, tamper: str,
        table: str) -> None:
    """Each disagreement is a finding naming the side table (and the row, when the log
    holds it); exit 1, never "ok"."""
    keyed.execute(tamper)
    code, out = _verify(keyed, capsys)
    assert code == 1, (kind, out)
    assert table in out, (kind, out)
    if kind != "entry past the log's end":
        assert "first bad row 3" in out, (kind, out)


@pytest.mark.sqlite_only(INDEXES_ARE_THE_DATABASES)
@pytest.mark.parametrize("seq", [1, 4, 8])
def test_a_big_log_checks_its_side_tables_in_every_span(
        keyed: Target, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        seq: int) -> None:
    """A log verified on several processes (`PARALLEL_ROWS`) checks each span's entries:
    a row hidden in the first, a middle or the last span is named as in one pass."""
    import engine.store.log as log_module

    real = getattr(log_module, "_verify_file_parts", None)
    monkeypatch.setattr(log_module, "PARALLEL_ROWS", 2)
    # Three spans of this small log, each checked by its own process.
    monkeypatch.setattr(log_module, "_verify_file_parts",
                        lambda path, lo, hi, processes, **kw: real(path, lo, hi, 3, **kw),
                        raising=False)
    keyed.execute(f"delete from log_cards where seq = {seq}")
    code, out = _verify(keyed, capsys)
    assert code == 1 and f"first bad row {seq}" in out and "log_cards" in out, out
