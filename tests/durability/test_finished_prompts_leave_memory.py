"""Finished prompts leave memory: the engine keeps the prompts in play and a bounded
number of the newest finished ones; the rest are read from the store (both stores).

The rule: an engine's memory and its open time do not grow with the prompt
history. Memory holds every prompt still in play (queued, held, delivered)
and at most `FINISHED_KEPT` finished ones; every prompt ever made is still
found by id with its state and text, listed by state and arrow in order of
arrival, and a wait on a long-finished prompt answers at once from its row.

Found in round 18: `State.prompts` held every prompt ever made, with its text,
loaded whole at open, and each listing sorted all of them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

#: The bound the tests set: small, so that a few prompts go past it.
BOUND = 5
#: Prompts made and finished: well past the bound.
MADE = 14
IN_PLAY = ("queued", "held", "delivered")


@pytest.fixture(autouse=True)
def _small_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.core.prompt_memory.FINISHED_KEPT", BOUND)


async def _setup(engine: Engine, folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    for node in ({"id": "c1", "type": "card", "package": "acme.prompter"},
                 {"id": "a1", "type": "agent"}, {"id": "a2", "type": "agent"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e2", "from": "c1", "to": "a2"})


async def _prompt(engine: Engine, clock: VirtualClock, agent: str, text: str) -> str:
    clock.t += 11.0  # past the card's rate window (6 a minute)
    decision = await engine.call("c1", "agents.prompt", agent, {"text": text})
    assert decision.prompt is not None, decision
    return decision.prompt


async def _history(engine: Engine, clock: VirtualClock) -> dict[str, str]:
    """MADE prompts delivered and replied, one rejected, one left held: id -> text."""
    texts: dict[str, str] = {}
    for i in range(MADE):
        agent = ("a1", "a2")[i % 2]
        text = f"prompt number {i} " + "x" * i
        texts[await _prompt(engine, clock, agent, text)] = text
        await engine.agent_replied(agent, f"done {i}")
    await engine.set_node("a2", {"dangerous": True})
    rejected = await _prompt(engine, clock, "a2", "rejected one")
    texts[rejected] = "rejected one"
    await engine.reject_hold(rejected)
    held = await _prompt(engine, clock, "a2", "still held")
    texts[held] = "still held"
    return texts


def _finished_in_memory(engine: Engine) -> int:
    return sum(1 for p in engine.state.prompts.values() if p.state not in IN_PLAY)


def _rows(target: Target, where: str = "", params: list[Any] | None = None) -> list[tuple[str, str]]:
    return [(str(r[0]), str(r[1])) for r in target.query(
        f"select id, state from prompts {where} order by position", params)]


def _check_every_prompt(engine: Engine, target: Target, texts: dict[str, str]) -> None:
    stored = dict(_rows(target))
    assert sorted(stored) == sorted(texts)
    for prompt_id, text in texts.items():
        found = engine.prompt(prompt_id)
        assert found is not None, f"{prompt_id} is not found by id"
        assert (found.state, found.text) == (stored[prompt_id], text)
        assert engine.outcome(prompt_id).value["state"] == stored[prompt_id]
    listed = [(p.id, p.state) for p in engine.prompts()]
    assert listed == _rows(target)
    for state in ("replied", "rejected", "held", "queued", "delivered"):
        assert [(p.id, p.state) for p in engine.prompts(state=state)] == \
            _rows(target, "where state = ?", [state]), state
    for arrow in ("e1", "e2"):
        assert [(p.id, p.state) for p in engine.prompts(arrow=arrow)] == \
            _rows(target, "where arrow = ?", [arrow]), arrow
    assert [(p.id, p.state) for p in engine.prompts(state="replied", arrow="e2")] == \
        _rows(target, "where state = ? and arrow = ?", ["replied", "e2"])
    assert engine.prompt("p999999") is None


async def test_memory_keeps_a_bounded_number_of_finished_prompts(
        make_engine: Any, target: Target, clock: VirtualClock, tmp_path: Path) -> None:
    # GIVEN more finished prompts than memory keeps, and one held
    engine = make_engine()
    await _setup(engine, tmp_path / "ws")
    texts = await _history(engine, clock)
    # THEN memory holds the held one and at most the bound of finished ones
    assert _finished_in_memory(engine) <= BOUND, "every finished prompt stays in memory"
    held = engine.prompts(state="held")
    assert [p.text for p in held] == ["still held"]
    assert held[0].id in engine.state.prompts
    # AND every prompt is found by id, and listed by state and arrow in order
    _check_every_prompt(engine, target, texts)
    # AND a wait on a long-finished prompt answers at once, from its row
    first = next(iter(texts))
    assert first not in engine.state.prompts
    waited = await asyncio.wait_for(engine.wait(first), 1.0)
    assert waited.value["state"] == "replied"
    # WHEN the engine is opened again
    engine.close()
    again = make_engine()
    # THEN it loads only the prompts in play and the bounded set of finished ones
    assert _finished_in_memory(again) <= BOUND
    assert len(again.state.prompts) <= BOUND + 1
    assert [p.id for p in again.prompts(state="held")] == [held[0].id]
    _check_every_prompt(again, target, texts)
    # AND the held prompt is still answered from memory
    await again.reject_hold(held[0].id)
    assert again.prompt(held[0].id).state == "rejected"


async def test_another_engines_prompts_are_found_and_finished_here(
        make_engine: Any, target: Target, clock: VirtualClock, tmp_path: Path) -> None:
    # GIVEN two engines on one store; this one has seen the held prompt
    here = make_engine()
    await _setup(here, tmp_path / "ws")
    there = make_engine()
    texts = await _history(there, clock)
    held = there.prompts(state="held")[0].id
    here.catch_up()
    assert here.prompt(held).state == "held"
    # THEN the other engine's prompts are all found here, memory still bounded
    assert _finished_in_memory(here) <= BOUND
    _check_every_prompt(here, target, texts)
    # WHEN the other engine finishes the held prompt
    await there.reject_hold(held)
    # THEN this one sees it finished, and a wait here answers at once
    here.catch_up()
    assert here.prompt(held).state == "rejected"
    waited = await asyncio.wait_for(here.wait(held), 1.0)
    assert waited.value["state"] == "rejected"
    # AND a prompt made there after this engine last looked is found here by id
    there_new = await _prompt(there, clock, "a1", "made elsewhere")
    assert here.prompt(there_new) is not None
    assert here.prompt(there_new).text == "made elsewhere"
