"""SPEC §10 "Storage", fail closed: a store whose migrations ledger was dropped or emptied
by hand (its tables all there) is refused at open with a `StoreFailed` naming the ledger,
never a driver's error nor an attempt to make the store's schema afresh on top of the one
it has; nothing is written, and the log's verbs refuse it naming the ledger (a dropped
one is a missing table, a finding: exit 1; an emptied one a store this code cannot
judge, as a half-applied migration: exit 2) rather than calling the database one that
holds no store. On both stores.

Found in round 25: on PostgreSQL, an engine opening a store without ``schema_migrations``
ran the whole chain again and failed with psycopg's ``relation "workspaces" already
exists`` (reason ``connection``), and ``log verify`` / ``log show`` said the database
"holds no arrowgate store" (exit 2); a ledger missing only its newest row failed with
``function "arrowgate_hand_lock" already exists``.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main
from engine.core.errors import StoreFailed
from tests.durability.targets import Target

LEDGER = {"sqlite": "_sqlite_migrations", "postgresql": "schema_migrations"}


def _tables(target: Target) -> list[str]:
    if target.postgres:
        return [str(r[0]) for r in target.query(
            "select table_name from information_schema.tables"
            " where table_schema = current_schema() order by 1")]
    return [str(r[0]) for r in target.query(
        "select name from sqlite_master where type = 'table' order by 1")]


@pytest.mark.parametrize("how", ["drop", "empty"])
async def test_a_store_without_its_ledger_is_refused_naming_it(
        world: Engine, make_engine: Any, target: Target, how: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Dropped or emptied: refused at open naming the ledger; nothing made or changed."""
    # GIVEN a store some engine made and used, its ledger then dropped or emptied by hand
    await world.grant("acme.prompter", "clipboard.write")
    world.close()
    ledger = LEDGER[target.kind]
    target.execute(f"drop table {ledger}" if how == "drop" else f"delete from {ledger}")
    before = _tables(target)
    # WHEN an engine opens it
    with pytest.raises(StoreFailed) as caught:
        make_engine()
    # THEN it is refused, naming the ledger and what became of it, and nothing is written
    message = str(caught.value)
    assert ledger in message, message
    assert "already exists" not in message, message
    if how == "drop":
        assert caught.value.reason == "missing-table", message
        assert f"table {ledger} is missing" in message, message
    else:
        assert caught.value.reason == "schema-mismatch", message
    assert _tables(target) == before, "a refused open changed the schema"
    # AND the log's verbs say so
    for verb in ("verify", "show"):
        code = main(["log", verb, *target.args()])
        out, err = capsys.readouterr()
        assert code == (1 if how == "drop" else 2), (verb, out, err)
        assert ledger in err and "Traceback" not in err, (verb, err)


async def test_a_ledger_missing_its_newest_step_is_refused_naming_it(
        world: Engine, make_engine: Any, target: Target) -> None:
    """The ledger's newest row deleted (the step's schema still there): refused naming the
    step, ``schema-mismatch``, never the driver's "already exists" alone."""
    world.close()
    if target.postgres:
        step = str(target.query("select name from schema_migrations"
                                " order by position desc limit 1")[0][0])
        target.execute(f"delete from schema_migrations where name = '{step}'")
    else:
        step = str(target.query("select name from _sqlite_migrations"
                                " order by id desc limit 1")[0][0])
        target.execute(f"delete from _sqlite_migrations where name = '{step}'")
    with pytest.raises(StoreFailed) as caught:
        make_engine()
    assert caught.value.reason == "schema-mismatch", str(caught.value)
    assert step in str(caught.value), str(caught.value)
