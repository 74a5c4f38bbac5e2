"""What the operation prologue writes (a hold expiring, a tool call timing out) is judged
again when another process committed just before the write, and the timers go on.

`Context.tick` catches up with the store, then runs the tickers, which may write
(`Prompts.expire_due`). If another process commits in between, the ticker's write
finds it under the write lock (`Stale`): what it was about to do is judged again on
what the store now holds. Inside an operation the whole operation was made again;
outside one — `Engine.run_timers` — `Stale` ended the timers, and holds no longer
expired on their own in that engine (SPEC §7: silence is never consent).

(Found by a helper in round 18 while fixing the effect's write; fixed in round 18.)
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from engine import Engine
from tests.conftest import polls

from ..conftest import manifest, offer_install
from .targets import Target


def _commit_elsewhere(target: Target) -> None:
    """Another engine (its own thread, loop and connection) changes a note and closes."""
    async def change() -> None:
        other = target.open()
        try:
            await other.set_node("n1", {"text": "elsewhere"})
        finally:
            other.close()

    thread = threading.Thread(target=asyncio.run, args=(change(),))
    thread.start()
    thread.join(30)


async def test_a_commit_between_catching_up_and_expiring_leaves_the_timers_running(
        make_engine: Any, target: Target, tmp_path: Path, clock: Any) -> None:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", str(tmp_path / "ws"), settings={"hold_timeout": 5})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "a1", "type": "agent", "dangerous": True}, workspace="w1")
    await engine.add_node({"id": "n1", "type": "note"}, workspace="w1")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    held = await engine.call("c1", "agents.prompt", "a1", {"text": "rm -rf /"})
    assert held.outcome == "held"
    prompt_id = held.prompt
    assert prompt_id is not None
    clock.t += 6  # past the hold's deadline

    # Another process commits a change (a note's text) right after the timers caught up.
    real_sync = engine.store.sync
    raced: list[bool] = []

    def sync_then_commit_elsewhere() -> Any:
        result = real_sync()
        if not raced:
            raced.append(True)
            _commit_elsewhere(target)
        return result

    engine.store.sync = sync_then_commit_elsewhere  # type: ignore[method-assign]
    stop = asyncio.Event()
    timers = asyncio.get_running_loop().create_task(engine.run_timers(stop))
    for _ in polls():
        await asyncio.sleep(0.01)
        if timers.done() or engine.prompt(prompt_id).state == "expired":  # type: ignore[union-attr]
            break
    stop.set()
    await timers  # raises what ended the timers, if anything did
    assert raced
    assert engine.prompt(prompt_id).state == "expired"  # type: ignore[union-attr]
    assert engine.state.canvas.node("n1").data["text"] == "elsewhere"  # type: ignore[union-attr]
