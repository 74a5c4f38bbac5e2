"""Every rate key of SPEC §6's table is a hard cap over the half-open window (t − P, t],
through the engine, on both stores, across a restart in the middle of the window.

For each key: N accepted calls spread over the first half of a period (for ``prompt``
and ``run`` alternately by the method and by port data, which count in one window);
then, at oldest + P − ε, the call is refused ``RATE_LIMITED`` with ``retry_after`` ε
exactly (by the method and on the port alike), however often it is tried (refused calls
never count); the engine is closed and opened again mid-window and says the same; at
oldest + P exactly the call goes, and the next at that instant is refused with
``retry_after`` the gap to the next oldest.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from engine import Decision, Engine
from engine.app.replay import VirtualClock
from engine.core.catalogue import RATE_LIMITS
from tests.conftest import manifest, offer_install

#: When each key's first call is made (setup happens at the clock's 1000).
T0 = 2000.0
#: How long before the edge the refused calls are tried (exact in binary).
EPS = 0.25

MANIFEST = manifest("acme.k", {"agents.prompt": {}, "terminals.write": {},
                               "clipboard.write": {}, "canvas.spawn": {}},
                    ports={"inputs": [], "outputs": ["p", "t"]})


async def _canvas(engine: Engine, folder: Path) -> None:
    """Card c1 wired to agent a1 and terminal t1, plainly and by port (p → a1.prompt,
    t → t1.command)."""
    folder.mkdir()
    await engine.create_workspace("w1", folder, settings={"card_cap": 1000})
    await offer_install(engine, MANIFEST)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.k"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "status": "working"},
                          workspace="w1")
    await engine.add_node({"id": "t1", "type": "terminal"}, workspace="w1")
    await engine.add_arrow({"id": "ea", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "et", "from": "c1", "to": "t1"})
    await engine.add_arrow({"id": "pa", "from": "c1", "from_port": "p", "to": "a1",
                            "to_port": "prompt"})
    await engine.add_arrow({"id": "pt", "from": "c1", "from_port": "t", "to": "t1",
                            "to_port": "command"})


Way = Callable[[Engine, int], Awaitable[Decision]]


def _method(call: str, target: str | None, arg: str) -> Way:
    async def way(engine: Engine, i: int) -> Decision:
        return await engine.call("c1", call, target, {arg: f"{call} {i}"})
    return way


def _port(port: str, arrow: str) -> Way:
    async def way(engine: Engine, i: int) -> Decision:
        return (await engine.emit("c1", port, f"{port} {i}"))[arrow]
    return way


async def _spawn(engine: Engine, _i: int) -> Decision:
    return await engine.call("c1", "canvas.spawn", None, {"kind": "note"})


#: Each key and the ways a card's calls count in its window.
WAYS: dict[str, list[Way]] = {
    "prompt": [_method("agents.prompt", "a1", "text"), _port("p", "pa")],
    "run": [_method("terminals.run", "t1", "command"), _port("t", "pt")],
    "write": [_method("terminals.write", "t1", "data")],
    "clipboard": [_method("clipboard.copyText", None, "text")],
    "spawn": [_spawn],
}


def _refused(d: Decision, key: str, wait: float) -> None:
    assert (d.code, d.outcome, d.reason) == ("RATE_LIMITED", "rate-limited", key), d
    assert d.retry_after == wait, (key, d.retry_after, wait)


async def _refused_every_way(engine: Engine, key: str, wait: float, n: int) -> None:
    for way in WAYS[key]:
        for _ in range(3):
            _refused(await way(engine, n), key, wait)


async def _spawned_notes_go(engine: Engine) -> None:
    """The live-spawn cap (4) is not what this test is about: its notes are removed."""
    for node in engine.state.canvas.nodes("w1", type="note"):
        await engine.remove_node(node.id)


@pytest.mark.parametrize("key", sorted(WAYS))
async def test_a_key_s_window_is_half_open_with_retry_after_to_the_instant(
        key: str, make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """N calls (every way of the key) fill (t − P, t]; at oldest + P − ε each way is
    refused, retry_after ε, before and after a restart; at oldest + P one goes, then the
    next waits exactly the gap to the next oldest."""
    limit = RATE_LIMITS[key]
    n, period = limit.limit, limit.period
    gap = period / (2 * n)  # every call in the window's first half
    ways = WAYS[key]
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    # GIVEN N accepted calls of the key, the ways taken in turn
    for i in range(n):
        clock.t = T0 + i * gap
        d = await ways[i % len(ways)](engine, i)
        assert d.allowed, (key, i, d)
    if key == "spawn":
        await _spawned_notes_go(engine)
    # WHEN a call of any way comes ε before the oldest leaves
    clock.t = T0 + period - EPS
    # THEN it is refused, retry_after ε, however often it is tried
    await _refused_every_way(engine, key, EPS, n)
    # AND a restart in the middle of the window keeps every counted call
    engine.close()
    engine = make_engine()
    await _refused_every_way(engine, key, EPS, n)
    # AND at oldest + P exactly the oldest has left (t − P, t]: one call goes
    clock.t = T0 + period
    d = await ways[-1](engine, n)
    assert d.allowed, (key, d)
    # AND the next at that instant waits for the next oldest: gap seconds (none: 1 s)
    wait = gap if n > 1 else period
    await _refused_every_way(engine, key, wait, n + 1)
