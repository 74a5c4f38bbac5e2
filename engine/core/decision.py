"""The decision on one call, as a value."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from engine.core.errors import ConsentError

__all__ = ["CallDenied", "Decision", "Outcome"]

#: ``ok`` completed; ``queued`` an accepted prompt; ``held`` waits for a person;
#: ``denied`` refused; ``rate-limited`` refused for RATE_LIMITED.
Outcome = Literal["ok", "queued", "held", "denied", "rate-limited"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What the engine decided on a call, and why.

    A refused call is a Decision with ``outcome`` ``denied`` or
    ``rate-limited`` and a ``code``; it is not an exception. Call
    `raise_for_outcome` to turn a refusal into `CallDenied`.
    """

    outcome: Outcome
    call: str
    card: str | None
    package: str | None = None
    target: str | None = None
    permission: str | None = None
    code: str | None = None
    reason: str | None = None
    arrow: str | None = None  #: the arrow that allowed (or would carry) the call
    message: str = ""
    retry_after: float | None = None  #: seconds, for RATE_LIMITED
    value: Any = None  #: what the call returned, when it completed
    prompt: str | None = None  #: the prompt's id, for an accepted prompt
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def allowed(self) -> bool:
        """True unless the call was refused."""
        return self.outcome in ("ok", "queued", "held")

    def raise_for_outcome(self) -> Decision:
        """Return self when allowed; raise `CallDenied` when refused."""
        if not self.allowed:
            raise CallDenied(self)
        return self

    def with_(self, **changes: Any) -> Decision:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form of this decision."""
        out: dict[str, Any] = {
            "outcome": self.outcome,
            "call": self.call,
            "card": self.card,
            "package": self.package,
            "target": self.target,
            "permission": self.permission,
            "code": self.code,
            "reason": self.reason,
            "arrow": self.arrow,
            "message": self.message,
        }
        if self.retry_after is not None:
            out["retry_after"] = self.retry_after
        if self.prompt is not None:
            out["prompt"] = self.prompt
        if self.value is not None:
            out["value"] = self.value
        return out


class CallDenied(ConsentError):
    """A refused call, for callers that prefer raising over matching a Decision.

    Its code and message are the Decision's (whose message already starts
    with its code, made by `engine.core.checks.denial`).
    """

    prefixed = False

    def __init__(self, decision: Decision) -> None:
        self.code = decision.code or self.code
        super().__init__(
            decision.message,
            reason=decision.reason,
            permission=decision.permission,
            card=decision.card,
            package=decision.package,
            details={"retry_after": decision.retry_after} if decision.retry_after else None,
        )
        self.decision = decision  #: the Decision that was refused
