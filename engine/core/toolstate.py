"""A tool call's state (SPEC §9), as the engine keeps and stores it (`engine.services.tools`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["TOOL_STATES", "ToolCall"]

#: Every state of a tool call: open, then one resolution.
TOOL_STATES = ("open", "answered", "failed", "expired", "cancelled")

_MISSING: Any = object()


@dataclass(slots=True)
class ToolCall:
    """One call of an agent to a card's tool, and how it ended."""

    id: str
    position: int
    workspace: str
    agent: str
    card: str
    package: str
    tool: str
    arrow: str | None
    args: dict[str, Any] = field(default_factory=dict)
    chain: list[str] = field(default_factory=list)  #: agent → card (→ …), ending with the card
    state: str = "open"
    t: float = 0.0
    deadline: float = 0.0  #: when it times out (engine clock)
    result: Any = None  #: the card's result, once ``answered``
    code: str | None = None  #: ``TOOL_ERROR``, ``TOOL_TIMEOUT``, or why it was cancelled
    reason: str | None = None
    message: str = ""
    ended: float | None = None

    @property
    def is_open(self) -> bool:
        """True until answered, failed, expired or cancelled."""
        return self.state == "open"

    def to_json(self) -> dict[str, Any]:
        """The agent's view: ``{"id", "state", "agent", "card", "tool"}`` and the
        ``result`` once answered, or the ``error`` (code, reason, message) once failed,
        expired or cancelled."""
        out: dict[str, Any] = {"id": self.id, "state": self.state, "agent": self.agent,
                               "card": self.card, "tool": self.tool}
        if self.state == "answered":
            out["result"] = self.result
        elif self.state != "open":
            out["error"] = {"code": self.code, "reason": self.reason, "message": self.message}
        return out

    def to_row(self) -> dict[str, Any]:
        """The row stored in the ``tool_calls`` table."""
        row = {name: getattr(self, name) for name in _FIELDS}
        row["args"] = json.dumps(self.args)
        row["chain"] = json.dumps(self.chain)
        row["result"] = json.dumps(self.result)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ToolCall:
        """Rebuild a tool call from its stored row."""
        data = dict(row)
        for name in ("args", "chain", "result"):
            data[name] = json.loads(data[name]) if data[name] is not None else None
        data["args"] = data["args"] or {}
        data["chain"] = data["chain"] or []
        return cls(**data)


_FIELDS = tuple(f.name for f in fields(ToolCall))
