"""Accepted prompts sharing one commit (issue 19): numbered once a batch, written once.

The store reads the highest prompt position once a batch and counts from it;
a prompt delivered (or held) at once is written once, as it then stands. These
tests check that what is in memory, what is in the table and what a reopened
engine loads all agree, also when one operation of the batch fails.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from canvas import WorkspaceSettings
from engine import Engine
from engine.core.decision import Decision
from engine.core.prompts import PROMPT_COLUMNS, Prompt
from engine.store import encoding

from ..conftest import fail_saving_node, manifest, offer_install

CARDS = 6


async def _many(make_engine: Any, tmp_path: Path) -> Engine:
    engine: Engine = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.prompter", {"agents.prompt": {}}))
    for i in range(CARDS):
        await engine.add_node({"id": f"c{i}", "type": "card", "package": "acme.prompter"},
                              workspace="w1")
        await engine.add_node({"id": f"a{i}", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": f"e{i}", "from": f"c{i}", "to": f"a{i}"})
    return engine


def _table(engine: Engine) -> dict[str, tuple[int, str]]:
    db = engine.db
    assert db is not None
    return {row[0]: (row[1], row[2]) for row in
            db.execute("select id, position, state from prompts")}


def _memory(engine: Engine) -> dict[str, tuple[int, str]]:
    return {p.id: (p.position, p.state) for p in engine.prompts()}


async def test_prompts_of_one_batch_are_numbered_in_turn_and_stored_as_they_stand(
        make_engine: Any, tmp_path: Path) -> None:
    """Concurrent prompts share a commit, take positions 1, 2, 3… and their rows say
    delivered (the agent was waiting) or queued (it was working)."""
    engine = await _many(make_engine, tmp_path)
    await engine.set_node("a0", {"status": "working"})
    commits = engine.commits
    results = await asyncio.gather(*(engine.call(f"c{i}", "agents.prompt", f"a{i}",
                                                 {"text": f"hi {i}"}) for i in range(CARDS)))
    assert engine.commits == commits + 1
    assert sorted(d.prompt or "" for d in results) == sorted(f"p{i}" for i in range(1, CARDS + 1))
    states = {d.prompt: d.value["state"] for d in results}
    assert states[results[0].prompt] == "queued"
    assert all(states[d.prompt] == "delivered" for d in results[1:])
    assert _table(engine) == _memory(engine)
    # The next batch counts on from the table.
    d = await engine.call("c0", "agents.prompt", "a0", {"text": "again"})
    assert d.prompt == f"p{CARDS + 1}"
    assert _table(engine) == _memory(engine)
    engine.close()
    reopened: Engine = make_engine()
    assert _memory(reopened) == _table(reopened) == {
        p: s for p, s in _table(reopened).items()}
    assert (await reopened.call("c1", "agents.prompt", "a1", {"text": "on"})).prompt == \
        f"p{CARDS + 2}"
    assert reopened.verify_log().ok


async def test_a_failed_prompt_in_a_batch_takes_nothing_from_the_others(
        make_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One prompt's delivery fails in the store: it is rolled back alone, the others
    commit with distinct positions, and memory, table and a reopened engine agree."""
    engine = await _many(make_engine, tmp_path)
    restore = fail_saving_node(engine, "a2", monkeypatch)
    results = await asyncio.gather(*(engine.call(f"c{i}", "agents.prompt", f"a{i}",
                                                 {"text": f"hi {i}"}) for i in range(CARDS)),
                                   return_exceptions=True)
    failed = [r for r in results if not isinstance(r, Decision)]
    assert len(failed) == 1 and getattr(failed[0], "code", None) == "STORE_FAILED"
    ids = [r.prompt for r in results if isinstance(r, Decision)]
    assert len(ids) == CARDS - 1 and len(set(ids)) == CARDS - 1
    assert _table(engine) == _memory(engine)
    assert sorted(p for p, _ in _table(engine).values()) == sorted(
        {p for p, _ in _table(engine).values()})
    restore()
    d = await engine.call("c2", "agents.prompt", "a2", {"text": "again"})
    assert d.outcome == "queued" and d.value["state"] == "delivered"
    assert _table(engine) == _memory(engine)
    engine.close()
    reopened: Engine = make_engine()
    assert _memory(reopened) == _table(reopened)
    assert reopened.verify_log().ok


def test_decision_with_is_dataclasses_replace() -> None:
    """`Decision.with_` sets its slots directly; the copy is what `replace` gives."""
    d = Decision("ok", "agents.prompt", "c1", "pkg", "a1", "agents.prompt", arrow="e1",
                 message="ok", extra={"k": 1})
    changes: list[dict[str, Any]] = [
        {}, {"prompt": "p1"}, {"outcome": "queued", "value": {"prompt": "p1"}},
        {"card": None, "target": None, "retry_after": 2.5, "extra": {}},
        {f.name: None for f in dataclasses.fields(Decision) if f.init},
    ]
    for change in changes:
        copy = d.with_(**change)
        assert copy == dataclasses.replace(d, **change) and copy is not d
        assert type(copy) is Decision and hash(copy.outcome) is not None
    assert d.message == "ok" and d.prompt is None  # the original is unchanged
    with pytest.raises(TypeError):
        d.with_(bogus=1)  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.with_(prompt="p1").prompt = "p2"  # type: ignore[misc]


def test_prompt_values_are_its_row() -> None:
    """`Prompt.to_values` binds what `to_row` holds, in `PROMPT_COLUMNS` order."""
    for chain in ([], ["c1"], ["c1", "a1", "c2"], ["c\u00e9", "a\ud800"]):
        p = Prompt("p1", 1, "w1", "c1", "pkg", "a1", "e1", "agents.prompt", "hi ✓", chain,
                   "held", 1.5, 2.5, "operator", "X", "y", "m")
        row = p.to_row()
        assert tuple(row) == PROMPT_COLUMNS and tuple(row.values()) == p.to_values()
        # The store's encoder (what `SQLiteStore.save_prompt` passes) binds the same text.
        assert p.to_values(encoding.dumps) == p.to_values()


def test_values_built_without_the_frozen_init_are_the_frozen_values() -> None:
    """`event`, `delivered` and a prompt's plan are built slot by slot (cheaper than the
    frozen dataclasses' ``__init__``): the same values, of the same classes, as frozen."""
    from canvas import Node
    from engine.core.events import Event, event
    from engine.core.plans import Performed, PromptPlan, SaveNode, delivered, plan_prompt
    from engine.core.prompts import Prompt

    data = {"agent": "a1", "status": "working"}
    made = event("agents.status", None, data)
    assert made == Event("agents.status", None, data) and type(made) is Event
    node = Node("a1", "agent", "w1", {"status": "working"})
    done = delivered(node)
    assert done == Performed(None, (SaveNode(node),)) and type(done) is Performed
    assert type(done.effects[0]) is SaveNode
    prompt = Prompt("p1", 1, "w1", "c1", "pkg", "a1", "e1", "agents.prompt", "hi", ["c1", "a1"],
                    "queued", 1.5)
    plan = plan_prompt(prompt, Node("a1", "agent", "w1", {}), "agents.prompt", "e1", "ok",
                       WorkspaceSettings(), 1.5)
    assert type(plan) is PromptPlan and plan == PromptPlan(plan.decision, prompt, None)
    for frozen, field in ((made, "type"), (done, "value"), (done.effects[0], "node"),
                          (plan, "held")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(frozen, field, None)
