"""Prompts on their arrows: the queue, holds and their states (SPEC §6, §7)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["OPEN_STATES", "PROMPT_STATES", "Prompt", "QUEUE_LIMIT"]

#: Every state a prompt shows on its arrow.
PROMPT_STATES = ("queued", "held", "delivered", "replied", "rejected", "expired", "cancelled")
#: States in which the prompt still waits for something (delivery or a person).
OPEN_STATES = frozenset({"queued", "held"})
#: Undelivered prompts an agent's queue holds at most.
QUEUE_LIMIT = 20


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

    def to_row(self) -> dict[str, Any]:
        """The row stored in the ``prompts`` table."""
        import json

        row = asdict(self)
        row["chain"] = json.dumps(self.chain)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Prompt:
        """Rebuild a prompt from its stored row."""
        import json

        data = dict(row)
        data["chain"] = json.loads(data["chain"] or "[]")
        return cls(**data)
