"""An agent's queue holds at most 20 undelivered prompts (SPEC §6), and a held prompt is
one of them: held (check 12) only after the queue let it in (check 11), waiting for a
person as a queued one waits for the agent. On both stores, across a restart.

(Found in round 27: only ``queued`` prompts were counted, so check 11 never bit for an
agent in dangerous mode: four cards within their rate windows piled 24 holds on one
agent, each a consent dialog for a person — and nothing bounded how many.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.prompts import QUEUE_LIMIT
from tests.conftest import manifest, offer_install

CARDS = 4


async def _canvas(engine: Engine, folder: Path) -> None:
    """Cards c0..c3 wired to agent a1 (working, dangerous) and to agent a2 (working)."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "a1", "type": "agent", "status": "working",
                           "dangerous": True}, workspace="w1")
    await engine.add_node({"id": "a2", "type": "agent", "status": "working"}, workspace="w1")
    for c in range(CARDS):
        await engine.add_node({"id": f"c{c}", "type": "card", "package": "acme.p"},
                              workspace="w1")
        for agent in ("a1", "a2"):
            await engine.add_arrow({"id": f"c{c}{agent}", "from": f"c{c}", "to": agent})


async def _prompt(engine: Engine, i: int, agent: str = "a1") -> Any:
    return await engine.call(f"c{i % CARDS}", "agents.prompt", agent, {"text": f"p{i}"})


async def test_twenty_held_prompts_fill_the_queue(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Twenty held: the 21st is QUEUE_FULL, not counted in its card's window, also
    after a restart; a hold answered makes room for one more."""
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    # GIVEN ten queued prompts, then a1 in dangerous mode holding ten more
    await engine.set_node("a1", {"dangerous": False})
    queued = [await _prompt(engine, i) for i in range(10)]
    assert [d.outcome for d in queued] == ["queued"] * 10
    await engine.set_node("a1", {"dangerous": True})
    held = [await _prompt(engine, i) for i in range(10, QUEUE_LIMIT)]
    assert [d.outcome for d in held] == ["held"] * (QUEUE_LIMIT - 10)
    # WHEN one more is made
    d = await _prompt(engine, QUEUE_LIMIT)
    # THEN the queue is full, and the refusal counted nothing: its card prompts a2
    assert (d.code, d.outcome) == ("QUEUE_FULL", "denied"), d
    assert (await _prompt(engine, QUEUE_LIMIT, "a2")).outcome == "queued"
    engine.close()
    engine = make_engine()
    d = await _prompt(engine, QUEUE_LIMIT + 1)
    assert d.code == "QUEUE_FULL", d
    # AND a hold rejected makes room for one more, held in its turn
    await engine.reject_hold(held[0].prompt)
    assert (await _prompt(engine, QUEUE_LIMIT + 2)).outcome == "held"
    assert (await _prompt(engine, QUEUE_LIMIT + 3)).code == "QUEUE_FULL"


async def test_a_hold_approved_keeps_its_place_in_a_full_queue(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Nineteen queued and one held: approving it queues it (its place was kept), never
    cancels it as over the 20."""
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    await engine.set_node("a1", {"dangerous": False})
    for i in range(QUEUE_LIMIT - 1):
        clock.t += 3  # four cards: at most 6 a minute each
        assert (await _prompt(engine, i)).outcome == "queued"
    await engine.set_node("a1", {"dangerous": True})
    held = await _prompt(engine, QUEUE_LIMIT)
    assert held.outcome == "held", held
    assert (await _prompt(engine, QUEUE_LIMIT + 1)).code == "QUEUE_FULL"
    prompt = engine.prompt(held.prompt)
    assert prompt is not None
    d = await engine.approve_hold(held.prompt, text_sha256=prompt.text_sha256)
    assert d.code is None and engine.prompt(held.prompt).state == "queued", d
