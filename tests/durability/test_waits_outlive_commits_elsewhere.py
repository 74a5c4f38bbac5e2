"""A wait on a held prompt or an open tool call never ends in `Stale`, however often
other processes commit while its prologue expires what is due.

`Engine.wait` and `Engine.wait_tool` run the operation prologue (`Context.tick`)
outside any operation: no `run_durably` is there to make a `Stale` write again
under the write lock. A ticker whose write keeps finding another process's
commit is judged again a few times, and then must be left for the wait's next
round (as `Engine.run_timers` does), never escape to the caller as the
store's internal `Stale`: the prompt still expires, the tool call still times
out, and the waiter is told so (SPEC §7: silence is never consent).

Found by the round 18 review: `Context.tick` gave up after three tries and let
`Stale` go up; `Engine.run_timers` caught it, the two waits did not, and a
waiter got `engine.store.transactions.Stale` instead of the expiry.

Both stores (the ``target`` fixture); the other process is another engine on
its own thread, loop and connection, committing just before each of the
ticker's first writes.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install
from .targets import Target

#: Commits made elsewhere in a row, each just before the ticker's write: more than
#: `Context.tick` tries within one round.
RACES = 5


def _commit_elsewhere(target: Target, text: str) -> None:
    """Another engine (its own thread, loop and connection) changes a note and closes;
    its clock is before every deadline, so that it expires nothing itself."""
    async def change() -> None:
        other = target.open(clock=VirtualClock(0.0))
        try:
            await other.set_node("n1", {"text": text})
        finally:
            other.close()

    thread = threading.Thread(target=asyncio.run, args=(change(),))
    thread.start()
    thread.join(30)


def _race_each_batch(engine: Engine, target: Target) -> list[int]:
    """Before each of this engine's next `RACES` batches opens, another process commits."""
    tx = engine.store.tx  # type: ignore[attr-defined]
    real_open = tx.open_batch
    raced: list[int] = []

    def open_after_a_commit_elsewhere(**kwargs: Any) -> Any:
        if len(raced) < RACES:
            raced.append(1)
            _commit_elsewhere(target, f"elsewhere {len(raced)}")
        return real_open(**kwargs)

    tx.open_batch = open_after_a_commit_elsewhere
    return raced


async def _workspace(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", str(tmp_path / "ws"),
                                  settings={"hold_timeout": 5, "tool_timeout": 5})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}, tools=["relay"]))
    await engine.add_node({"id": "a1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_node({"id": "n1", "type": "note"}, workspace="w1")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})


async def test_a_wait_on_a_held_prompt_is_told_its_expiry_while_others_commit(
        make_engine: Any, target: Target, tmp_path: Path, clock: Any) -> None:
    engine: Engine = make_engine()
    await _workspace(engine, tmp_path)
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "rm -rf /"})
    assert held.outcome == "held" and held.prompt is not None
    clock.t += 6  # past the hold's deadline
    raced = _race_each_batch(engine, target)
    told = await asyncio.wait_for(engine.wait(held.prompt), 30)
    assert len(raced) == RACES
    assert told.value["resolution"] == "expired", told
    assert engine.state.canvas.node("n1").data["text"] == f"elsewhere {RACES}"  # type: ignore[union-attr]


async def test_a_wait_on_a_tool_call_is_told_its_timeout_while_others_commit(
        make_engine: Any, target: Target, tmp_path: Path, clock: Any) -> None:
    engine: Engine = make_engine()
    await _workspace(engine, tmp_path)
    opened = await engine.tool("a1", "c1", "relay", {})
    assert opened.value["state"] == "open", opened
    clock.t += 6  # past the call's deadline
    raced = _race_each_batch(engine, target)
    tc = await asyncio.wait_for(engine.wait_tool(opened.value["id"]), 30)
    assert len(raced) == RACES
    assert tc.state == "expired", tc
