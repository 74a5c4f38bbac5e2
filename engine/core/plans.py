"""Plans: what an accepted operation needs done, as values.

The core decides and returns a `Plan` — its decision and the effects that
make it so, in order — and the host does them (oso's host loop). A service
applies a plan inside one write (`engine.services.apply.Applier`), so its
rate event, rows, log row and events commit or roll back together.

Effects:

- `CountRate`: count an accepted call in its rolling window (SPEC §6);
- `LogRow`: append the decision's row to its arrow's log (SPEC §8);
- `Emit`: an event, sent once the change has committed;
- `SaveNode`, `AddNode`, `AddArrow`: what carrying out a call changed on the canvas;
- `Watch`: the card now receives the node's output (``agents.onOutput``).

An accepted prompt's plan is a `PromptPlan` instead: its steps are always
the same few (count, save, log, pump the agent's queue), done in order by
`engine.services.calls.Calls`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from canvas.model import Node, WorkspaceSettings
from engine.core.decision import Decision, accepted
from engine.core.events import Event
from engine.core.holds import hold_deadline
from engine.core.prompts import Prompt

__all__ = ["AddArrow", "AddNode", "CountRate", "Effect", "Emit", "LogRow", "Performed", "Plan",
           "PromptPlan", "SaveNode", "Watch", "delivered", "plan_call", "plan_prompt"]


@dataclass(frozen=True, slots=True)
class CountRate:
    """Count a call of ``card`` under ``key`` at ``t`` (in its spawn tree root's window)."""

    card: str
    key: str
    t: float


@dataclass(frozen=True, slots=True)
class LogRow:
    """Append the decision's row to its arrow's log."""

    decision: Decision
    outcome: str
    payload: str | None
    chain: tuple[str, ...] | list[str] | None
    #: The row's time: the decision's, the time its call was counted at (None: now).
    t: float | None = None


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


Effect = CountRate | LogRow | Emit | SaveNode | AddNode | AddArrow | Watch


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


@dataclass(frozen=True, slots=True)
class PromptPlan:
    """An accepted prompt's plan (SPEC §6, §7): what the host does is always the same.

    The host counts the prompt in its rate window, then for a held prompt
    sends ``held`` (the ``prompt.held`` event), saves ``prompt`` and logs
    ``decision``'s row (``held``); for a queued one saves ``prompt``, logs
    the ``queued`` row and pumps the agent's queue. Its effects are fixed,
    so they are not listed one by one as a `Plan`'s are: every accepted
    prompt goes through here.
    """

    decision: Decision  #: the prompt's decision (and its log row's): ``queued`` or ``held``
    prompt: Prompt  #: the prompt to save, as it now stands
    held: Event | None  #: the event announcing a hold; None for a queued prompt


class _UnfrozenPromptPlan:
    """`PromptPlan`'s slots without the frozen ``__setattr__`` (see `_prompt_plan`)."""

    __slots__ = PromptPlan.__slots__


def _prompt_plan(decision: Decision, prompt: Prompt, held: Event | None) -> PromptPlan:
    # ``PromptPlan(...)`` at a third of the frozen ``__init__``'s cost, as
    # `engine.core.checks._passed` builds a Passed: every accepted prompt has one.
    built: Any = _UnfrozenPromptPlan()
    built.decision = decision
    built.prompt = prompt
    built.held = held
    built.__class__ = PromptPlan
    plan: PromptPlan = built
    return plan


class _UnfrozenSaveNode:
    """`SaveNode`'s slots without the frozen ``__setattr__`` (see `delivered`)."""

    __slots__ = SaveNode.__slots__


class _UnfrozenPerformed:
    """`Performed`'s slots without the frozen ``__setattr__`` (see `delivered`)."""

    __slots__ = Performed.__slots__


def delivered(node: Node) -> Performed:
    """``Performed(None, (SaveNode(node),))``, what delivering a prompt to an agent did,
    at a third of the frozen ``__init__``s' cost (every delivered prompt has one)."""
    save: Any = _UnfrozenSaveNode()
    save.node = node
    save.__class__ = SaveNode
    built: Any = _UnfrozenPerformed()
    built.value = None
    built.effects = (save,)
    built.__class__ = Performed
    performed: Performed = built
    return performed


def plan_prompt(prompt: Prompt, agent: Node, permission: str | None, arrow: str | None,
                message: str, settings: WorkspaceSettings, now: float) -> PromptPlan:
    """An accepted prompt (SPEC §6, §7): counted, then held for a person or queued.

    To an agent in dangerous mode the prompt is held until ``hold_timeout``
    passes; otherwise it is queued and the agent's queue pumped. ``message``
    is a queued prompt's (``ok: …``); the decision is built once, with its
    final fields (a queued prompt's ``value`` names its state, which the
    host updates once the pump has run).
    """
    if agent.data.get("dangerous"):
        held = replace(prompt, state="held", deadline=hold_deadline(now, settings))
        return PromptPlan(
            accepted("held", "agents.prompt", held.card, held.package, agent.id, permission,
                     arrow, f"held: prompt {held.id} to {agent.id} waits for a "
                     "person's OK (dangerous mode)", {"prompt": held.id, "state": "held"},
                     held.id),
            held,
            Event("prompt.held", held.card, {
                "prompt": held.id, "agent": held.agent, "arrow": held.arrow, "text": held.text,
                "deadline": held.deadline}))
    return _prompt_plan(
        accepted("queued", "agents.prompt", prompt.card, prompt.package, agent.id, permission,
                 arrow, message, {"prompt": prompt.id, "state": "queued"}, prompt.id),
        prompt, None)


def plan_call(base: Decision, performed: Performed, rate: CountRate | None,
              payload: str | None, chain: tuple[str, ...] | None = None, *,
              t: float | None = None) -> Plan:
    """A completed call: counted (when it has a window), what it did, its ``ok`` row
    (with ``chain``, that of the tool call it was made in, if any) at ``t``, the
    time it was decided (None: when the row is written)."""
    decision = base.with_(value=performed.value)
    if base.call == "canvas.spawn":
        decision = decision.with_(target=performed.value,
                                  arrow=f"{base.card}->{performed.value}")
    head: tuple[Effect, ...] = (rate,) if rate is not None else ()
    # A node the call changed is saved after the call's own row: what the change
    # sends on (a note's new text on its output port) is logged after its cause.
    effects = performed.effects
    saves = tuple(e for e in effects if type(e) is SaveNode)
    if saves:
        effects = tuple(e for e in effects if type(e) is not SaveNode)
    return Plan(decision, (*head, *effects, LogRow(decision, "ok", payload, chain, t),
                                 *saves))
