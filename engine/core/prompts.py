"""Prompts on their arrows: the queue, holds and their states (SPEC §6, §7)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["IN_PLAY", "LOST_TURN", "OPEN_STATES", "PROMPT_COLUMNS", "PROMPT_STATES", "Prompt",
           "PromptIndex", "QUEUE_LIMIT"]

#: Every state a prompt shows on its arrow.
PROMPT_STATES = ("queued", "held", "delivered", "replied", "rejected", "expired", "cancelled")
#: States in which the prompt still waits for something (delivery or a person).
OPEN_STATES = frozenset({"queued", "held"})
#: States in which the prompt is still in play: waiting, or delivered and awaiting
#: its reply. Every other state is final (``approved`` only passes through).
IN_PLAY = frozenset({"queued", "held", "delivered"})
#: Undelivered prompts an agent's queue holds at most.
QUEUE_LIMIT = 20
#: The reply of a turn whose run was lost (the engine stopped while the agent
#: worked): an error reply, as a failed run's are, so the turn ends and the
#: card that asked learns that no answer will come.
LOST_TURN = "[no reply: the run of this turn was lost when the engine stopped; prompt again]"


@dataclass(slots=True)
class Prompt:
    """One prompt from a card to an agent."""

    id: str
    position: int  #: order of arrival, for delivery in order
    workspace: str
    card: str
    package: str
    agent: str
    arrow: str | None
    call: str  #: ``agents.prompt``, or ``port:prompt`` for port data
    text: str
    chain: list[str] = field(default_factory=list)
    state: str = "queued"
    t: float = 0.0
    deadline: float | None = None  #: when a hold expires
    approver: str | None = None
    code: str | None = None
    reason: str | None = None
    message: str = ""

    @property
    def text_sha256(self) -> str:
        """Hex SHA-256 of the prompt text (UTF-8): what an approval names (SPEC §7)."""
        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()

    def to_row(self) -> dict[str, Any]:
        """The row stored in the ``prompts`` table."""
        # Field by field, not dataclasses.asdict: that deep-copies, on every save.
        row = {name: getattr(self, name) for name in _FIELDS}
        row["chain"] = json.dumps(self.chain)
        return row

    def to_values(self, dumps: Callable[[Any], str] = json.dumps) -> tuple[Any, ...]:
        """The stored row's values in the order of `PROMPT_COLUMNS` (what a save binds).

        ``dumps`` writes the chain: ``json.dumps`` or a function giving the
        very same text (the store's, whose encoder is set up once).
        """
        chain = self.chain
        return (self.id, self.position, self.workspace, self.card, self.package, self.agent,
                self.arrow, self.call, self.text, dumps(chain) if chain else "[]",
                self.state, self.t, self.deadline, self.approver, self.code, self.reason,
                self.message)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Prompt:
        """Rebuild a prompt from its stored row."""
        data = dict(row)
        data["chain"] = json.loads(data["chain"] or "[]")
        return cls(**data)


_FIELDS = tuple(f.name for f in fields(Prompt))
#: The columns of a stored prompt, in the order `Prompt.to_values` gives them.
PROMPT_COLUMNS: tuple[str, ...] = ("id", "position", "workspace", "card", "package", "agent",
                                   "arrow", "call", "text", "chain", "state", "t", "deadline",
                                   "approver", "code", "reason", "message")
# `to_values` lists the fields by position: fail at import if they ever change.
if PROMPT_COLUMNS != _FIELDS:
    raise ImportError("engine.core.prompts.Prompt.to_values does not match its fields")


class PromptIndex:
    """The prompts still in play, by agent: what every call and tick looks at.

    Finished prompts (replied, rejected, expired, cancelled) leave the index
    (and, past the newest few, memory: `engine.core.prompt_memory`), so
    deciding a call costs the same after a million prompts as after ten. The engine calls
    `update` whenever it saves a prompt (the one place a state change lands).
    """

    _TRACKED = IN_PLAY

    def __init__(self) -> None:
        self._by_agent: dict[str, dict[str, Prompt]] = {}
        self._held: dict[str, Prompt] = {}

    def update(self, prompt: Prompt) -> None:
        """Take in the prompt's current state."""
        # Every accepted prompt comes here twice (queued, then delivered): no
        # empty dict built for `setdefault`, no look-up in an empty `_held`.
        state = prompt.state
        mine = self._by_agent.get(prompt.agent)
        if state in self._TRACKED:
            if mine is None:
                mine = self._by_agent[prompt.agent] = {}
            mine[prompt.id] = prompt
        elif mine is not None:
            mine.pop(prompt.id, None)
            if not mine:
                del self._by_agent[prompt.agent]
        if state == "held":
            self._held[prompt.id] = prompt
        elif self._held:
            self._held.pop(prompt.id, None)

    def of_agent(self, agent: str, state: str) -> list[Prompt]:
        """An agent's prompts in ``state`` (queued, held or delivered), in order of arrival."""
        return sorted((p for p in self._by_agent.get(agent, {}).values() if p.state == state),
                      key=lambda p: p.position)

    def agents(self) -> list[str]:
        """The agents with a queued, held or delivered prompt."""
        return list(self._by_agent)

    def first(self, agent: str, state: str) -> Prompt | None:
        """An agent's earliest prompt in ``state`` (the first of `of_agent`), or None."""
        first: Prompt | None = None
        for p in self._by_agent.get(agent, {}).values():
            if p.state == state and (first is None or p.position < first.position):
                first = p
        return first

    def undelivered(self, agent: str) -> int:
        """How many of an agent's prompts are queued or held (`OPEN_STATES`)."""
        return sum(1 for p in self._by_agent.get(agent, {}).values() if p.state in OPEN_STATES)

    def any_held(self) -> bool:
        """Whether any prompt is held: `due` finds nothing otherwise."""
        return bool(self._held)

    def held(self) -> list[Prompt]:
        """Every held prompt, in order of arrival."""
        return sorted(self._held.values(), key=lambda p: p.position)

    def due(self, now: float) -> list[Prompt]:
        """Held prompts whose deadline has passed, earliest deadline first.

        Every operation asks this first, and usually nothing is held at all.
        """
        if not self._held:
            return []
        return sorted((p for p in self._held.values()
                       if p.deadline is not None and p.deadline <= now),
                      key=lambda p: (p.deadline or 0.0, p.position))

    def in_state(self, state: str) -> list[Prompt]:
        """Every agent's prompts in ``state`` (queued, held or delivered), in order of arrival."""
        if state == "held":
            return self.held()
        return sorted((p for prompts in self._by_agent.values() for p in prompts.values()
                       if p.state == state), key=lambda p: p.position)

    def open(self) -> list[Prompt]:
        """Queued and held prompts of every agent, in order of arrival."""
        return sorted((p for prompts in self._by_agent.values() for p in prompts.values()
                       if p.state in OPEN_STATES), key=lambda p: p.position)
