"""Removing cards and agents leaves nothing of them in the engine's memory.

SPEC: hostile input (a card, an agent, a canvas app churning nodes) never
floods the engine. An app may add and remove nodes forever, and a card may
spawn and its spawns be removed (SPEC §2 ``canvas.spawn``): every per-node
structure kept in memory lets go of a node when it is removed — by this
engine's operation, and when another process removed it (seen on catch-up,
change by change or by loading the state again) — so churn never grows it.

Found in round 18: a removed card's refusal budget (`DenialLog`), its
``agents.onOutput`` watches (`EventHub._watching`), its on-screen times
(`Visibility`) and its pending ``suppressed`` summary key stayed in memory
for as long as the engine ran.

Both stores (the ``target`` fixture); the structures are inspected through
the engine's objects, and the bound is a count of entries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.effects.drivers.scripted import ScriptedAgent

from ..conftest import manifest, offer_install

#: Churn rounds: every one adds, uses and removes a card, an agent and a terminal.
ROUNDS = 3
#: Refusals a minute logged row by row in the test's workspace: the churn goes beyond.
LIMIT = 2


async def _world(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws",
                                  settings={"denial_log_limit": LIMIT})
    await offer_install(engine, manifest("acme.churn", {
        "agents.prompt": {}, "agents.output": {}, "terminals.write": {},
        "canvas.spawn": {}, "cards.connected": {}}, tools=["relay"]))


async def _use(engine: Engine, round_: int) -> list[str]:
    """Add a card, an agent and a terminal, wire them and use every per-node structure;
    returns the ids of the nodes made (spawns included)."""
    card, agent, term = f"c{round_}", f"a{round_}", f"t{round_}"
    await engine.add_node({"id": card, "type": "card", "package": "acme.churn"}, workspace="w1")
    await engine.add_node({"id": agent, "type": "agent"}, workspace="w1")
    await engine.add_node({"id": term, "type": "terminal"}, workspace="w1")
    await engine.add_arrow({"id": f"e{round_}", "from": card, "to": agent})
    await engine.add_arrow({"id": f"f{round_}", "from": card, "to": term})
    await engine.attach_driver(agent, ScriptedAgent(agent, {}))
    assert (await engine.call(card, "agents.prompt", agent, {"text": "hi"})).outcome in (
        "queued", "ok")
    assert (await engine.call(card, "agents.onOutput", agent)).outcome == "ok"
    wrote = await engine.call(card, "terminals.write", term, {"data": "ls"})
    assert wrote.outcome == "ok", wrote
    # The agent calls the card's tool: an open tool call (the loop guard's chains).
    assert (await engine.tool(agent, card, "relay", {})).value["state"] == "open"
    spawned = (await engine.call(card, "canvas.spawn", None, {"kind": "note"})).value
    copy = (await engine.call(card, "canvas.spawn", None, {"kind": "self"})).value
    # Beyond the refusal budget: rows, then a pending `suppressed` summary.
    for _ in range(LIMIT + 3):
        assert (await engine.call(card, "agents.prompt", term, {"text": "x"})).outcome \
            == "denied"
    engine.card_seen(card)
    engine.set_workspace_hidden("w1", True)
    engine.set_workspace_hidden("w1", False)
    return [card, agent, term, str(spawned), str(copy)]


def _held(engine: Engine, gone: set[str]) -> dict[str, list[Any]]:
    """What each per-node structure of ``engine`` still holds of the nodes ``gone``."""
    record = engine._record  # noqa: SLF001 - the structures are the engine's own
    hub = engine.events
    seen = engine._visibility  # noqa: SLF001
    state = engine.state
    return {
        "denial budgets": [k for k in record.denials._times if k in gone],  # noqa: SLF001
        "pending summaries": [k for k in record._pending if k in gone],  # noqa: SLF001
        "onOutput watchers": [k for k in hub._watching if k in gone],  # noqa: SLF001
        "onOutput watched": [n for nodes in hub._watching.values()  # noqa: SLF001
                             for n in nodes if n in gone],
        "subscriptions": [k for k in hub._subs if k in gone],  # noqa: SLF001
        "seen times": [k for k in seen._seen if k in gone],  # noqa: SLF001
        "looked times": [k for k in seen._looked if k in gone],  # noqa: SLF001
        "rate windows": [k for k in state.counters._windows if k[0] in gone],  # noqa: SLF001
        "prompt index": [a for a in state.open_prompts.agents() if a in gone],
        "open tool calls": [t.id for t in state.tool_calls.values()
                            if t.card in gone or t.agent in gone],
        "drivers": [n for n in (*engine.world.drivers,
                                *engine.world._starting) if n in gone],  # noqa: SLF001
    }


def _empty(engine: Engine, gone: set[str]) -> None:
    left = {name: ids for name, ids in _held(engine, gone).items() if ids}
    assert not left, f"removed nodes still held: {left}"


def _summed_up(engine: Engine, cards: list[str]) -> None:
    """Each removed card's suppressed refusals have their row (written by its removal),
    and the store keeps no pending summary for it."""
    rows = engine.log_rows(outcome="suppressed")
    assert sorted(r["card"] for r in rows) == sorted(cards)
    assert all(engine.store.pending_summary(card) is None for card in cards)


async def _remove(engine: Engine, ids: list[str]) -> None:
    # Spawns first: removing the card hands them on, and they are churned too.
    for node_id in reversed(ids):
        if engine.state.canvas.node(node_id) is not None:
            await engine.remove_node(node_id)


async def test_removed_nodes_leave_nothing_in_memory(make_engine: Any, tmp_path: Path) -> None:
    """Churned cards, agents, terminals and spawns, removed by the engine that used them:
    no per-node structure holds any of their ids afterwards."""
    # GIVEN an engine whose cards use every per-node structure
    engine = make_engine()
    await _world(engine, tmp_path)
    gone: set[str] = set()
    for round_ in range(ROUNDS):
        ids = await _use(engine, round_)
        engine.subscribe(ids[0])
        assert any(_held(engine, set(ids)).values())  # the test does reach them
        # WHEN the nodes are removed
        await _remove(engine, ids)
        gone.update(ids)
    await engine.world.settle()
    # THEN nothing of them is left, and none of their refusals went uncounted
    _empty(engine, gone)
    _summed_up(engine, [f"c{r}" for r in range(ROUNDS)])


@pytest.mark.parametrize("seen", ["catch-up", "reload"])
async def test_nodes_removed_elsewhere_leave_nothing_in_memory(
        make_engine: Any, tmp_path: Path, seen: str) -> None:
    """Churned nodes used through one engine and removed by another on the store: once
    the first has caught up (change by change, or by loading the state again), none of
    its per-node structures holds any of their ids."""
    # GIVEN an engine whose cards use every per-node structure, and another on its store
    used = make_engine()
    await _world(used, tmp_path)
    remover = make_engine()
    gone: set[str] = set()
    for round_ in range(ROUNDS):
        ids = await _use(used, round_)
        used.subscribe(ids[0])
        assert any(_held(used, set(ids)).values())
        # WHEN the other engine removes the nodes, and the first catches up
        remover.catch_up()
        await _remove(remover, ids)
        if seen == "reload":
            used._reload()  # noqa: SLF001 - as after a failed write, or far behind
        used.catch_up()
        gone.update(ids)
    await used.world.settle()
    # THEN nothing of them is left
    assert all(used.state.canvas.node(n) is None for n in gone)
    _empty(used, gone)
    _summed_up(used, [f"c{r}" for r in range(ROUNDS)])
