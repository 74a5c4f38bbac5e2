"""A table of the store removed outside the engine is a `log verify` finding (exit 1),
named, on both stores — never "ok", and never a usage error.

The consent history, the grants, the log's rows by card or arrow, a held
prompt's row: each lives in a table the engine made (its migrations' ledger
says so). Dropping one is an edit of the store as much as deleting its rows
is, and deleting rows is a finding.

Found in round 23: with the ``consent``, ``grants`` or ``meta`` table dropped,
``arrowgate log verify`` said "the database cannot be used: no such table",
exit 2 (the code for a usage error, which a script checking for tampering
reads as "could not check"); with ``log_cards`` or ``prompts`` dropped it said
"log verify: ok".
"""

from __future__ import annotations

import json

import pytest

from engine.app.cli import main
from tests.durability.targets import Target


@pytest.mark.parametrize("table", ["consent", "grants", "meta", "log_cards", "prompts",
                                   "packages"])
def test_a_dropped_table_is_a_finding(consented: Target, table: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    if table == "log_cards" and consented.postgres:
        pytest.skip("PostgreSQL keeps the log's rows by card in an index, not a table")
    consented.execute(f"drop table {table}")
    code = main(["log", "verify", *consented.args()])
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    assert "log verify: FAILED" in out and table in out and "missing" in out, out


def test_a_dropped_table_is_a_finding_in_json(consented: Target,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    consented.execute("drop table consent")
    code = main(["log", "verify", "--json", *consented.args()])
    out = capsys.readouterr().out
    answer = json.loads(out)
    assert code == 1 and answer["ok"] is False and "consent" in answer["problem"], out


def test_an_untouched_store_still_verifies(consented: Target,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["log", "verify", *consented.args()])
    assert code == 0, capsys.readouterr()
