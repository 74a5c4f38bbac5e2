"""The decision on one call, as a value."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from engine.core.errors import ConsentError

__all__ = ["CallDenied", "Decision", "Outcome"]

#: "Keep this field" in `Decision.with_` (None is a value a field can take).
_KEEP: Any = object()
_new = object.__new__

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

    def with_(self, *,
              outcome: Any = _KEEP,
              call: Any = _KEEP,
              card: Any = _KEEP,
              package: Any = _KEEP,
              target: Any = _KEEP,
              permission: Any = _KEEP,
              code: Any = _KEEP,
              reason: Any = _KEEP,
              arrow: Any = _KEEP,
              message: Any = _KEEP,
              retry_after: Any = _KEEP,
              value: Any = _KEEP,
              prompt: Any = _KEEP,
              extra: Any = _KEEP) -> Decision:
        """A copy with the fields given changed."""
        # Not dataclasses.replace: that reads every field by name and runs the
        # frozen __init__ (an object.__setattr__ a field), 3× the cost of this,
        # and an accepted prompt makes four copies of its decision. The slots
        # are set through their descriptors, which a frozen class allows.
        out: Decision = _new(Decision)
        s = _SLOT_SETTERS
        s[0](out, self.outcome if outcome is _KEEP else outcome)
        s[1](out, self.call if call is _KEEP else call)
        s[2](out, self.card if card is _KEEP else card)
        s[3](out, self.package if package is _KEEP else package)
        s[4](out, self.target if target is _KEEP else target)
        s[5](out, self.permission if permission is _KEEP else permission)
        s[6](out, self.code if code is _KEEP else code)
        s[7](out, self.reason if reason is _KEEP else reason)
        s[8](out, self.arrow if arrow is _KEEP else arrow)
        s[9](out, self.message if message is _KEEP else message)
        s[10](out, self.retry_after if retry_after is _KEEP else retry_after)
        s[11](out, self.value if value is _KEEP else value)
        s[12](out, self.prompt if prompt is _KEEP else prompt)
        s[13](out, self.extra if extra is _KEEP else extra)
        return out

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


#: The setters of `Decision`'s slots, in the order of its fields (`Decision.with_`).
_SLOT_SETTERS = tuple(Decision.__dict__[f.name].__set__ for f in fields(Decision))
# `with_` lists the fields by position: fail at import if they ever change.
if tuple(f.name for f in fields(Decision)) != ('outcome', 'call', 'card', 'package', 'target', 'permission', 'code', 'reason', 'arrow', 'message', 'retry_after', 'value', 'prompt', 'extra'):
    raise ImportError("engine.core.decision.Decision.with_ does not match its fields")


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
