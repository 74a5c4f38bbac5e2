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
    SaveNode,
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
    """Held with its deadline, announced, its decision (and row) held; the input unchanged."""
    prompt = _prompt()
    plan = plan_prompt(prompt, _agent(True), "agents.prompt", "e1", "ok: card c1 (acme.p)",
                       SETTINGS, NOW)
    assert plan.prompt == Prompt("p1", 7, "w1", "c1", "acme.p", "a1", "e1", "agents.prompt",
                                 "ship it", chain=["c1", "a1"], state="held", t=NOW,
                                 deadline=NOW + 42.5)
    assert plan.held == Event("prompt.held", "c1", {"prompt": "p1", "agent": "a1", "arrow": "e1",
                                                    "text": "ship it", "deadline": NOW + 42.5})
    assert plan.decision == Decision(
        "held", "agents.prompt", "c1", "acme.p", "a1", "agents.prompt", arrow="e1",
        message="held: prompt p1 to a1 waits for a person's OK (dangerous mode)",
        value={"prompt": "p1", "state": "held"}, prompt="p1")
    assert plan.decision.to_json()["message"].startswith("held: prompt p1")
    assert prompt.state == "queued" and prompt.deadline is None  # the input is not changed


def test_a_prompt_to_a_plain_agent_is_queued() -> None:
    """Saved as it is; its decision is the base's, queued, naming the prompt, built once."""
    prompt = _prompt()
    plan = plan_prompt(prompt, _agent(False), "agents.prompt", "e1", "ok: card c1 (acme.p)",
                       SETTINGS, NOW)
    assert plan.prompt is prompt and plan.held is None
    assert plan.decision == _base().with_(outcome="queued", prompt="p1",
                                          value={"prompt": "p1", "state": "queued"})
    # Every field, those equality leaves out included, is what `with_` gives.
    expected = _base().with_(outcome="queued", prompt="p1",
                             value={"prompt": "p1", "state": "queued"})
    for name in Decision.__slots__:
        assert getattr(plan.decision, name) == getattr(expected, name), name


def test_plan_call_counts_first_then_what_was_done_then_the_ok_row() -> None:
    """The rate event leads, the performed effects follow in order, then the log row, and a
    node the call changed is saved last: what its change sends on (a note's new text on
    its output port, SPEC §1) is logged after the call that caused it."""
    base = _base("cards.note.append", "n1")
    note = Node.build({"id": "n1", "type": "note", "text": "x"}, "w1")
    rate = CountRate("c1", "write", NOW)
    plan = plan_call(base, Performed("done", (SaveNode(note), Emit(Event("e", "c1", {})))),
                     rate, "x")
    assert plan.decision == base.with_(value="done")
    assert plan.effects == (rate, Emit(Event("e", "c1", {})),
                            LogRow(base.with_(value="done"), "ok", "x", None), SaveNode(note))
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
