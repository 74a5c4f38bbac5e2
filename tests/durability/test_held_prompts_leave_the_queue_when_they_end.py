"""A held prompt is one of its agent's 20 undelivered (SPEC §6 check 11), and leaves the
count the moment it ends however it ends: rejected, expired, or cancelled because the
port arrow it travels was removed (SPEC §4.3, §7) — port prompts and method prompts
alike, the count right after each, and after a restart, on both stores.

(Round 27 review: clock27 made held prompts count in the queue; the approval and the
rejection were tested, not the expiry, the arrow removed or a port prompt.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.prompts import QUEUE_LIMIT
from tests.conftest import manifest, offer_install

CARDS = 4
HOLD = 600.0


async def _canvas(engine: Engine, folder: Path) -> None:
    """Cards c0..c3 (a port ``out``) wired to agent a1 (working); c0's ``out`` wired
    by port arrow ``pp`` into a1's ``prompt`` input; holds time out after 600 s."""
    folder.mkdir()
    await engine.create_workspace("w1", folder, settings={"hold_timeout": HOLD})
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}},
                                         ports={"inputs": [], "outputs": ["out"]}))
    await engine.add_node({"id": "a1", "type": "agent", "status": "working"}, workspace="w1")
    for c in range(CARDS):
        await engine.add_node({"id": f"c{c}", "type": "card", "package": "acme.p"},
                              workspace="w1")
        await engine.add_arrow({"id": f"c{c}a1", "from": f"c{c}", "to": "a1"})
    await engine.add_arrow({"id": "pp", "from": "c0", "from_port": "out", "to": "a1",
                            "to_port": "prompt"})


async def _prompt(engine: Engine, clock: VirtualClock, i: int) -> Any:
    clock.t += 3  # four cards: at most 6 prompts a minute each
    return await engine.call(f"c{i % CARDS}", "agents.prompt", "a1", {"text": f"p{i}"})


async def test_a_held_prompt_ended_frees_its_place_in_the_queue(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """18 queued, a method hold and a port hold: full. The port arrow removed frees one
    place (taken by a new hold); a rejection frees one; a restart keeps the count; the
    hold timeout running out frees the last hold's place."""
    engine: Engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    for i in range(QUEUE_LIMIT - 2):
        assert (await _prompt(engine, clock, i)).outcome == "queued"
    await engine.set_node("a1", {"dangerous": True})
    method = await _prompt(engine, clock, 100)
    clock.t += 61  # c0's prompt window empty again: port data counts in it too
    port = (await engine.emit("c0", "out", "through the port"))["pp"]
    assert (method.outcome, port.outcome) == ("held", "held"), (method, port)
    assert (await _prompt(engine, clock, 101)).code == "QUEUE_FULL"
    # WHEN the port arrow is removed: its hold cancelled, one place free
    await engine.remove_arrow("pp")
    assert engine.outcome(port.prompt).reason == "not-connected"
    again = await _prompt(engine, clock, 102)
    assert again.outcome == "held", again
    assert (await _prompt(engine, clock, 103)).code == "QUEUE_FULL"
    # WHEN a hold is rejected: one place free, taken again
    await engine.reject_hold(method.prompt)
    last = await _prompt(engine, clock, 104)
    assert last.outcome == "held", last
    assert (await _prompt(engine, clock, 105)).code == "QUEUE_FULL"
    # AND a restart counts the same 20
    engine.close()
    engine = make_engine()
    assert (await _prompt(engine, clock, 106)).code == "QUEUE_FULL"
    # WHEN the hold timeout runs out for both holds: two places free, no more
    clock.t += HOLD + 1
    assert [(await _prompt(engine, clock, 107 + i)).code for i in range(3)] == [
        None, None, "QUEUE_FULL"]
    assert engine.prompt(again.prompt).state == "expired"  # type: ignore[union-attr]
    assert engine.prompt(last.prompt).state == "expired"  # type: ignore[union-attr]
