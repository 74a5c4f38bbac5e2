"""SPEC §10 "Storage": a store whose migration ledger lacks a step its schema already
has (a half-applied migration: a crash of a tool, a ledger row deleted, a copy of the
schema without its ledger) is refused at open with an error naming the step, on both
stores, and nothing is changed.

Found in round 24: on SQLite the open failed with the bare SQLite error of running the
step again ("duplicate column name: expires", "table prompt_budget already exists"),
which names neither the step nor what is wrong with the store.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Engine
from engine.core.errors import StoreFailed
from tests.durability.targets import Target

#: The step whose ledger row is deleted, on each store.
STEPS = {"sqlite": ["m022_terminal_claim_leases", "m020_prompt_budget"],
         "postgresql": ["m010_terminal_claim_leases", "m008_prompt_budget"]}


def _ledger(target: Target) -> list[Any]:
    if target.postgres:
        return target.query("select position, name from schema_migrations order by 1")
    return target.query("select id, migration_set, name from _sqlite_migrations order by 1")


@pytest.mark.parametrize("which", [0, 1])
async def test_a_half_applied_migration_is_refused_naming_it(
        world: Engine, make_engine: Any, target: Target, which: int) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    world.close()
    step = STEPS[target.kind][which]
    target.execute({"sqlite": f"delete from _sqlite_migrations where name = '{step}'",
                    "postgresql": f"delete from schema_migrations where name = '{step}'"})
    before = _ledger(target)
    with pytest.raises(StoreFailed) as caught:
        make_engine()
    assert step in str(caught.value), str(caught.value)
    assert caught.value.reason == "schema-mismatch"
    assert _ledger(target) == before, "a refused open changed the ledger"
