"""A card's copies (``canvas.spawn`` kind ``self``) count in the windows of the root of
their spawn tree (SPEC §6), whichever way they call, whichever engine admits them, and
after a restart, on both stores.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.errors import InvalidNode
from tests.conftest import manifest, offer_install

MANIFEST = manifest("acme.s", {"agents.prompt": {}, "canvas.spawn": {}},
                    ports={"inputs": [], "outputs": ["p"]})


async def _tree(engine: Engine, folder: Path) -> tuple[str, str]:
    """Root c1, its copy and the copy's copy, each wired to agent a1 plainly and by
    port (p → a1.prompt); (copy, copy of the copy)."""
    folder.mkdir()
    await engine.create_workspace("w1", folder, settings={"card_cap": 1000})
    await offer_install(engine, MANIFEST)
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.s"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "name": "A1", "status": "working"},
                          workspace="w1")
    copy = (await engine.call("c1", "canvas.spawn", None, {"kind": "self"})).value
    grandchild = (await engine.call(copy, "canvas.spawn", None, {"kind": "self"})).value
    assert isinstance(copy, str) and isinstance(grandchild, str)
    for card in ("c1", copy, grandchild):
        await engine.add_arrow({"id": f"e-{card}", "from": card, "to": "a1"})
        await engine.add_arrow({"id": f"p-{card}", "from": card, "from_port": "p",
                                "to": "a1", "to_port": "prompt"})
    return copy, grandchild


async def test_a_copy_s_port_data_counts_in_its_root_s_window(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Six prompts of the root fill the window its copy's copy puts port data into, and
    the copy's method call; retry_after is the root's oldest + 60 − t."""
    engine = make_engine()
    copy, grandchild = await _tree(engine, tmp_path / "ws")
    clock.t = 2000.0
    for i in range(6):
        assert (await engine.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})).allowed
    clock.t = 2010.0
    d = (await engine.emit(grandchild, "p", "by port"))[f"p-{grandchild}"]
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 50.0), d
    d = await engine.call(copy, "agents.prompt", "a1", {"text": "by the method"})
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 50.0), d


async def test_a_copy_s_calls_stay_in_the_root_s_window_across_a_restart(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Calls of the copies fill the window; reopened, the root and every copy are
    refused until the oldest leaves, and the middle copy removed changes nothing."""
    engine = make_engine()
    copy, grandchild = await _tree(engine, tmp_path / "ws")
    for i, card in enumerate((copy, grandchild) * 3):
        clock.t = 2000.0 + i
        d = (await engine.emit(card, "p", f"p{i}"))[f"p-{card}"] if i % 2 else \
            await engine.call(card, "agents.prompt", "a1", {"text": f"p{i}"})
        assert d.allowed, d
    engine.close()
    clock.t = 2030.0
    engine = make_engine()
    await engine.remove_node(copy)
    for card in ("c1", grandchild):
        d = await engine.call(card, "agents.prompt", "a1", {"text": "after the restart"})
        assert (d.code, d.retry_after) == ("RATE_LIMITED", 30.0), (card, d)
    clock.t = 2060.0
    assert (await engine.call(grandchild, "agents.prompt", "a1", {"text": "now"})).allowed
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "and not two"})
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 1.0), d


async def test_two_engines_admitting_the_root_and_its_copy_at_once_keep_one_window(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Two engines on one store, one prompting as the root and one as its copy, ten each
    at once: six are accepted between them (one window however many engines)."""
    first = make_engine()
    copy, _grandchild = await _tree(first, tmp_path / "ws")
    second = make_engine()
    clock.t = 2000.0
    decisions = await asyncio.gather(*(
        engine.call(card, "agents.prompt", "a1", {"text": f"{card} {i}"})
        for i in range(10) for engine, card in ((first, "c1"), (second, copy))))
    outcomes = sorted(d.outcome for d in decisions)
    assert outcomes == ["queued"] * 6 + ["rate-limited"] * 14, outcomes
    for engine in (first, second):
        for card in ("c1", copy):
            d = await engine.call(card, "agents.prompt", "a1", {"text": "one more"})
            assert d.code == "RATE_LIMITED", d


async def test_a_copy_stays_in_its_root_s_workspace(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """A copy is made on its spawner's canvas and cannot be moved to another workspace,
    so a spawn tree (its windows and its live-spawn cap, counted per workspace) never
    spreads across workspaces."""
    engine = make_engine()
    copy, grandchild = await _tree(engine, tmp_path / "ws")
    (tmp_path / "ws2").mkdir()
    await engine.create_workspace("w2", tmp_path / "ws2")
    for node in (copy, grandchild):
        assert engine.state.canvas.node(node).workspace == "w1"
        with pytest.raises(InvalidNode, match="unknown field 'workspace'"):
            await engine.set_node(node, {"workspace": "w2"})
        assert engine.state.canvas.node(node).workspace == "w1"
