"""Plans: what an accepted prompt or call needs done, as values, in order."""

from __future__ import annotations

from canvas.model import Node, WorkspaceSettings
from engine.core.decision import Decision
from engine.core.events import Event
from engine.core.plans import (
    AddArrow,
    AddNode,
    CountRate,
    Emit,
    LogRow,
    Performed,
    Pump,
    SaveNode,
    SavePrompt,
    plan_call,
    plan_prompt,
)
from engine.core.prompts import Prompt

NOW = 1000.0
SETTINGS = WorkspaceSettings(hold_timeout=42.5)


def _prompt() -> Prompt:
    return Prompt("p1", 7, "w1", "c1", "acme.p", "a1", "e1", "agents.prompt", "ship it",
                  chain=["c1", "a1"], t=NOW)


def _base(call: str = "agents.prompt", target: str | None = "a1") -> Decision:
    return Decision("ok", call, "c1", "acme.p", target, "agents.prompt", arrow="e1",
                    message="ok: card c1 (acme.p)")


def _agent(dangerous: bool) -> Node:
    return Node.build({"id": "a1", "type": "agent", "dangerous": dangerous}, "w1")


def test_a_prompt_to_a_dangerous_agent_is_held() -> None:
    """Counted, announced, saved held with its deadline, logged held; never pumped."""
    prompt = _prompt()
    plan = plan_prompt(prompt, _agent(True), _base(), "prompt", SETTINGS, NOW)
    held = SavePrompt(Prompt("p1", 7, "w1", "c1", "acme.p", "a1", "e1", "agents.prompt",
                             "ship it", chain=["c1", "a1"], state="held", t=NOW,
                             deadline=NOW + 42.5))
    assert plan.effects == (
        CountRate("c1", "prompt", NOW),
        Emit(Event("prompt.held", "c1", {"prompt": "p1", "agent": "a1", "arrow": "e1",
                                         "text": "ship it", "deadline": NOW + 42.5})),
        held,
        LogRow(_base().with_(prompt="p1", outcome="held"), "held", "ship it", ["c1", "a1"]),
    )
    assert plan.decision.outcome == "held" and plan.decision.prompt == "p1"
    assert plan.decision.value == {"prompt": "p1", "state": "held"}
    assert "waits for a person's OK" in plan.decision.message
    assert prompt.state == "queued" and prompt.deadline is None  # the input is not changed


def test_a_prompt_to_a_plain_agent_is_queued_and_pumped() -> None:
    """Counted, saved as it is, logged queued, then the agent's queue pumped."""
    prompt = _prompt()
    plan = plan_prompt(prompt, _agent(False), _base(), "prompt", SETTINGS, NOW)
    assert plan.effects == (
        CountRate("c1", "prompt", NOW),
        SavePrompt(prompt),
        LogRow(_base().with_(prompt="p1", outcome="queued"), "queued", "ship it", ["c1", "a1"]),
        Pump("a1"),
    )
    assert (plan.decision.outcome, plan.decision.value) == (
        "queued", {"prompt": "p1", "state": "queued"})


def test_plan_call_counts_first_then_what_was_done_then_the_ok_row() -> None:
    """The rate event leads, the performed effects follow in order, the log row ends it."""
    base = _base("cards.note.append", "n1")
    note = Node.build({"id": "n1", "type": "note", "text": "x"}, "w1")
    rate = CountRate("c1", "write", NOW)
    plan = plan_call(base, Performed("done", (SaveNode(note), Emit(Event("e", "c1", {})))),
                     rate, "x")
    assert plan.decision == base.with_(value="done")
    assert plan.effects == (rate, SaveNode(note), Emit(Event("e", "c1", {})),
                            LogRow(base.with_(value="done"), "ok", "x", None))
    # Without a window nothing is counted.
    plan = plan_call(base, Performed(None), None, None)
    assert plan.effects == (LogRow(base, "ok", None, None),)


def test_plan_call_for_a_spawn_names_the_new_card_and_its_arrow() -> None:
    """canvas.spawn: the decision's target is the new node, its arrow card->node."""
    base = _base("canvas.spawn", None)
    node = Node.build({"id": "c7", "type": "note"}, "w1")
    raw = {"id": "c1->c7", "from": "c1", "to": "c7"}
    plan = plan_call(base, Performed("c7", (AddNode(node), AddArrow(raw))),
                     CountRate("c1", "spawn", NOW), "note")
    assert (plan.decision.target, plan.decision.arrow, plan.decision.value) == (
        "c7", "c1->c7", "c7")
    assert plan.effects[-1] == LogRow(plan.decision, "ok", "note", None)
    assert [type(e) for e in plan.effects] == [CountRate, AddNode, AddArrow, LogRow]
