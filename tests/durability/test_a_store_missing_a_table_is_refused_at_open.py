"""SPEC §10 "Storage", fail closed: a store missing a table its migrations made is
refused at open — `StoreFailed` naming the table, nothing written — on both stores;
`log show` and `log export` of a store whose log table is gone end in a clear error
naming it (exit 1, a finding, as `log verify`'s), never a traceback, nor "a database
of another program". (`log verify` reports it as a finding:
tests/durability/test_a_missing_table_is_a_finding.py.)

Found in round 24: with ``consent``, ``meta``, ``service_tokens``, ``terminal_drivers``
or ``prompt_budget`` dropped, an engine opened and allowed calls (on SQLite a
dropped ``consent`` then broke a call with a raw ``OperationalError``; the others
broke whatever first wrote there); on PostgreSQL ``log show`` and ``log export``
of a store without its ``log`` raised psycopg's ``UndefinedTable``, and on SQLite they
called it "an SQLite database of another program".
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main
from engine.core.errors import StoreFailed
from tests.durability.targets import Target


@pytest.mark.parametrize("table", ["consent", "meta", "service_tokens", "terminal_drivers",
                                   "prompt_budget", "log", "grants"])
async def test_a_store_missing_a_table_is_refused_at_open(
        world: Engine, make_engine: Any, target: Target, table: str) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    world.close()
    target.execute(f"drop table {table}")
    with pytest.raises(StoreFailed) as caught:
        make_engine()
    assert f"table {table} is missing" in str(caught.value), str(caught.value)


@pytest.mark.parametrize("verb", ["show", "export"])
async def test_the_log_verbs_of_a_store_without_its_log_end_clearly(
        world: Engine, target: Target, verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    world.close()
    target.execute("drop table log")
    code = main(["log", verb, *target.args()])
    out, err = capsys.readouterr()
    # A finding about the store (as `log verify`'s), not a usage error.
    assert code == 1, (out, err)
    assert "table log is missing" in err and "Traceback" not in err, err
