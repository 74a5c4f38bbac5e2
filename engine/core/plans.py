"""Plans: what an accepted operation needs done, as values.

The core decides and returns a `Plan` — its decision and the effects that
make it so, in order — and the host does them (oso's host loop). A service
applies a plan inside one write (`engine.services.apply.Applier`), so its
rate event, rows, log row and events commit or roll back together.

Effects:

- `CountRate`: count an accepted call in its rolling window (SPEC §6);
- `SavePrompt`: write a prompt as it now stands;
- `LogRow`: append the decision's row to its arrow's log (SPEC §8);
- `Emit`: an event, sent once the change has committed;
- `SaveNode`, `AddNode`, `AddArrow`: what carrying out a call changed on the canvas;
- `Watch`: the card now receives the node's output (``agents.onOutput``);
- `Pump`: hand the agent its queued prompts as the budget allows.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from canvas.model import Node, WorkspaceSettings
from engine.core.decision import Decision
from engine.core.events import Event
from engine.core.holds import hold_deadline
from engine.core.prompts import Prompt

__all__ = ["AddArrow", "AddNode", "CountRate", "Effect", "Emit", "LogRow", "Performed", "Plan",
           "Pump", "SaveNode", "SavePrompt", "Watch", "plan_call", "plan_prompt"]


@dataclass(frozen=True, slots=True)
class CountRate:
    """Count a call of ``card`` under ``key`` at ``t`` (in its spawn tree root's window)."""

    card: str
    key: str
    t: float


@dataclass(frozen=True, slots=True)
class SavePrompt:
    """Write the prompt as it now stands (and index it)."""

    prompt: Prompt


@dataclass(frozen=True, slots=True)
class LogRow:
    """Append the decision's row to its arrow's log."""

    decision: Decision
    outcome: str
    payload: str | None
    chain: tuple[str, ...] | list[str] | None


@dataclass(frozen=True, slots=True)
class Emit:
    """An event of the change, sent once it has committed."""

    event: Event


@dataclass(frozen=True, slots=True)
class SaveNode:
    """A node whose content or status changed."""

    node: Node


@dataclass(frozen=True, slots=True)
class AddNode:
    """A node created (``canvas.spawn``)."""

    node: Node


@dataclass(frozen=True, slots=True)
class AddArrow:
    """An arrow drawn, as its raw fields (checked by the canvas when added)."""

    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Watch:
    """``card`` now receives ``target``'s live output."""

    card: str
    target: str


@dataclass(frozen=True, slots=True)
class Pump:
    """Deliver ``agent``'s queued prompts, in order, as the budget allows."""

    agent: str


Effect = CountRate | SavePrompt | LogRow | Emit | SaveNode | AddNode | AddArrow | Watch | Pump


@dataclass(frozen=True, slots=True)
class Plan:
    """A decision and the effects that carry it out, in order."""

    decision: Decision
    effects: tuple[Effect, ...]


@dataclass(frozen=True, slots=True)
class Performed:
    """What carrying out a call did (`engine.effects.world.World.perform`): its value and
    the effects to record."""

    value: Any = None
    effects: tuple[Effect, ...] = field(default=())


def plan_prompt(prompt: Prompt, agent: Node, base: Decision, rate_key: str,
                settings: WorkspaceSettings, now: float) -> Plan:
    """An accepted prompt (SPEC §6, §7): counted, then held for a person or queued.

    To an agent in dangerous mode the prompt is held until ``hold_timeout``
    passes; otherwise it is queued and the agent's queue pumped.
    """
    decision = base.with_(prompt=prompt.id)
    count = CountRate(prompt.card, rate_key, now)
    if agent.data.get("dangerous"):
        held = replace(prompt, state="held", deadline=hold_deadline(now, settings))
        return Plan(
            decision.with_(outcome="held", value={"prompt": held.id, "state": "held"},
                           message=f"held: prompt {held.id} to {agent.id} waits for a "
                                   "person's OK (dangerous mode)"),
            (count,
             Emit(Event("prompt.held", held.card, {
                 "prompt": held.id, "agent": held.agent, "arrow": held.arrow, "text": held.text,
                 "deadline": held.deadline})),
             SavePrompt(held),
             LogRow(decision.with_(outcome="held"), "held", held.text, held.chain)))
    return Plan(decision.with_(outcome="queued", value={"prompt": prompt.id, "state": "queued"}),
                (count, SavePrompt(prompt),
                 LogRow(decision.with_(outcome="queued"), "queued", prompt.text, prompt.chain),
                 Pump(agent.id)))


def plan_call(base: Decision, performed: Performed, rate: CountRate | None,
              payload: str | None) -> Plan:
    """A completed call: counted (when it has a window), what it did, its ``ok`` row."""
    decision = base.with_(value=performed.value)
    if base.call == "canvas.spawn":
        decision = decision.with_(target=performed.value,
                                  arrow=f"{base.card}->{performed.value}")
    head: tuple[Effect, ...] = (rate,) if rate is not None else ()
    return Plan(decision, (*head, *performed.effects,
                           LogRow(decision, "ok", payload, None)))
