"""SPEC §4.3, §10 "Storage": consent narrowed outside the engine — a grant deleted or
rewritten, an arrow, a node or a package deleted, a package set to not installed, at a
``sqlite3`` or ``psql`` shell — is refused by every engine already running on the store,
at its very next call (its catch-up), on either store; the engines' live views are woken
by it.

Rule: what a running engine's state is built from is the store's record of changes, so
an INSERT, UPDATE, DELETE (or TRUNCATE) of a table the state reads, by whatever writer,
is recorded there (triggers), and the engine's own writes, which it records itself, are
recorded once.

(Found in round 24: on PostgreSQL only the engine wrote the change feed, so a grant
deleted at ``psql`` went unseen by every running engine until it reloaded: it kept
allowing calls the store no longer consented to.)
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from engine import Engine
from engine.service.auth import TokenStore
from tests.durability.targets import Statement, Target

#: The call every edit below must make refused: c1 writes to terminal t1 over arrow e3.
CALL = ("c1", "terminals.write", "t1", {"data": "y\n"})

#: Each edit that narrows consent, as a hand at a shell would make it.
EDITS: dict[str, Statement] = {
    "delete-grant": "delete from grants where package = 'acme.prompter'"
                    " and permission = 'terminals.write'",
    "rewrite-grant": "update grants set permission = 'clipboard.write'"
                     " where package = 'acme.prompter' and permission = 'terminals.write'",
    "delete-all-grants": {"sqlite": "delete from grants", "postgresql": "truncate grants"},
    "delete-arrow": "delete from arrows where id = 'e3'",
    "move-arrow": "update arrows set dst = 'n1' where id = 'e3'",
    "delete-node": "delete from nodes where id = 't1'",
    "delete-package": "delete from packages where name = 'acme.prompter'",
    "uninstall-package": "update packages set state = 'available' where name = 'acme.prompter'",
}


async def _until(what: Any, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while not what() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return bool(what())


@pytest.mark.parametrize("edit", sorted(EDITS))
async def test_consent_narrowed_by_hand_is_refused_at_the_next_call(
        world: Engine, target: Target, edit: str) -> None:
    assert (await world.call(*CALL)).allowed
    target.execute(EDITS[edit])
    after = await world.call(*CALL)
    assert not after.allowed, f"{edit} at a shell: the running engine still allowed {after}"


async def test_a_hand_edit_of_consent_wakes_other_engines(
        world: Engine, make_engine: Any, target: Target) -> None:
    other: Engine = make_engine()
    other.catch_up()
    woke: list[int] = []

    async def watch() -> None:
        async for revision in other.changes(0.01):
            woke.append(revision)

    watching = asyncio.create_task(watch())
    try:
        # A change the engine makes first: the watcher has looked at the store since.
        await world.add_node({"id": "n2", "type": "note"}, workspace="w1")
        assert await _until(lambda: len(woke) > 0), "a change of the canvas woke nothing"
        await asyncio.sleep(0.1)
        seen = len(woke)
        target.execute(EDITS["delete-grant"])
        assert await _until(lambda: len(woke) > seen), "a grant deleted by hand woke nothing"
    finally:
        watching.cancel()


@pytest.mark.postgres
async def test_the_engines_own_writes_are_recorded_once(world: Engine, target: Target) -> None:
    """Only the engine's own record of each batch is on the feed: the triggers that record
    hand edits never fire for the engine's writes (each a change to catch up on twice)."""
    if not target.postgres:
        pytest.skip("the SQLite feed is written by triggers alone")
    await world.grant("acme.prompter", "clipboard.write")
    await world.revoke("acme.prompter", "clipboard.write")
    await world.add_node({"id": "n2", "type": "note"}, workspace="w1")
    await world.add_arrow({"id": "e5", "from": "c1", "to": "n2"})
    await world.remove_arrow("e5")
    await world.remove_node("n2")
    assert (await world.call(*CALL)).allowed
    await world.call("c1", "agents.prompt", "a1", {"text": "hi"})
    tokens = TokenStore(world.store.tokens())
    try:
        token_id, _token = await tokens.mint("card:c1")
        assert await tokens.revoke(token_id)
    finally:
        tokens.close()
    subjects = [json.loads(s) for (s,) in target.query("select subject from changes")]
    by_hand = [s for s in subjects if "tables" not in s]
    assert not by_hand, f"the engine's own writes fired the hand-edit triggers: {by_hand}"
