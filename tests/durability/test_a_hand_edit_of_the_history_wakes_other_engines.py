"""SPEC §8, §10: an old row of the log or the consent history edited or deleted outside
the engine (a ``sqlite3``/``psql`` shell, another tool) is a change every other engine
on the store sees at once — its live views (`Engine.changes`: the TUI's log view, its
grants) are woken — and `log verify` still finds the edit.

Rule: what wakes another engine's views is the store's record of changes, so an
UPDATE or DELETE of ``log`` or ``consent`` rows, by whatever writer, is recorded there
(triggers; never fired by the engine's own appends, which only INSERT).

(Found in round 24: on SQLite such an edit moved none of the three ends another
engine's look reads — the change feed's, the log's and the consent history's newest
``seq`` — so it was taken for a lease renewal and nothing was woken until the next
change; PostgreSQL's edit recorded no change at all, so its views never learnt of it.)
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from engine import Engine
from engine.app.cli import main
from engine.core.errors import ApprovalRefused
from tests.durability.targets import Target

#: Each edit of an old row, as a hand at a shell would make it.
EDITS = {
    "update-log": "update log set reason = 'edited' where seq = (select min(seq) from log)",
    "delete-log": "delete from log where seq = (select min(seq) from log)",
    "update-consent": "update consent set principal = 'someone-else'"
                      " where seq = (select min(seq) from consent)",
    "delete-consent": "delete from consent where seq = (select min(seq) from consent)",
}


async def _until(what: Any, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while not what() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return bool(what())


@pytest.mark.parametrize("edit", sorted(EDITS))
async def test_a_hand_edit_of_the_history_wakes_other_engines(
        world: Engine, make_engine: Any, target: Target, edit: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    await world.grant("acme.prompter", "clipboard.write")
    await world.revoke("acme.prompter", "clipboard.write")
    with pytest.raises(ApprovalRefused):
        await world.grant("acme.prompter", "clipboard.write", by="agent:a1")
    for text in ("x", "y"):
        refused = await world.call("c1", "clipboard.write", None, {"text": text})
        assert not refused.allowed
    # The edited row is an old one: each table's newest row stays where it was.
    assert len(target.log_seqs()) > 1 and len(target.query("select seq from consent")) > 1
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
        target.execute(EDITS[edit])
        assert await _until(lambda: len(woke) > seen), f"{edit} of an old row woke nothing"
    finally:
        watching.cancel()
    world.close()
    other.close()
    capsys.readouterr()
    code = main(["log", "verify", *target.args()])
    out = capsys.readouterr().out
    assert code == 1 and "log verify: FAILED" in out, out
