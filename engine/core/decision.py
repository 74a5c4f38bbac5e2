"""The decision on one call, as a value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from engine.core.errors import ConsentError, with_code

__all__ = ["CallDenied", "Decision", "Outcome", "Words", "refusal"]

#: A refusal's explanation before it is written out: a function of the
#: refusal and the values that follow it, giving (why, fix) (see `refusal`).
Words = tuple[Callable[..., tuple[str, str]], *tuple[Any, ...]]

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
    #: A refusal's words until its message is written (see `refusal`), then None.
    _words: Words | None = field(default=None, init=False, repr=False, compare=False)

    if not TYPE_CHECKING:  # hidden from mypy, which would accept any attribute name

        def __getattr__(self, name: str) -> Any:
            # Reached only for a slot that is unset: the message of a refusal
            # made by `refusal`, written here the first time it is read.
            words = object.__getattribute__(self, "_words") if name == "message" else None
            if words is None:
                raise AttributeError(f"'Decision' object has no attribute {name!r}")
            text = _write(self, words)
            object.__setattr__(self, "message", text)
            object.__setattr__(self, "_words", None)
            return text

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


def _write(decision: Decision, words: Words) -> str:
    """The message of a refusal: who may not do what, the reason, why and what would allow it."""
    why, fix = words[0](decision, *words[1:])
    card, package, target = decision.card, decision.package, decision.target
    who = (f"card {card} ({package})" if package else f"card {card}") if card else "the caller"
    what = f"{decision.call} {target}" if target else decision.call
    text = with_code(decision.code or "", f"{who} may not {what}")
    if decision.reason:
        text += f": {decision.reason}"
    if why:
        text += f" — {why}"
    if fix:
        text += f"; {fix}"
    return text


class _Unfrozen:
    """A Decision's slots without the frozen ``__setattr__``: see `refusal`."""

    __slots__ = Decision.__slots__


_new = object.__new__


def refusal(call: str, card: str | None, code: str, package: str | None, target: str | None,
            permission: str | None, reason: str | None, arrow: str | None, words: Words,
            retry_after: float | None = None) -> Decision:
    """A refused call's Decision, its message written from ``words`` when first read.

    ``words`` is a function and its arguments: ``words[0](decision,
    *words[1:])`` gives (why, fix), what made the call fail and what would
    allow it (either may be empty); the message is then ``CODE: card C (P)
    may not CALL TARGET: reason — why; fix``. Most refusals a card gets are
    never read by a person (a card retries; the log row reads it once), yet
    writing them cost more than the checks that led to them.

    Built on a twin class with the same slots and then given its class: the
    dataclass's frozen ``__init__`` sets each field through
    ``object.__setattr__``, which made building a refusal cost more than
    deciding it. The result is an ordinary frozen Decision.
    """
    # Set field by field here rather than in an __init__: calling a class
    # costs more than the stores themselves.
    built: Any = _new(_Unfrozen)
    built.outcome = "rate-limited" if code == "RATE_LIMITED" else "denied"
    built.call = call
    built.card = card
    built.package = package
    built.target = target
    built.permission = permission
    built.code = code
    built.reason = reason
    built.arrow = arrow
    # ``message`` stays unset: Decision.__getattr__ writes it on first read.
    built.retry_after = retry_after
    built.value = None
    built.prompt = None
    built.extra = {}
    built._words = words
    built.__class__ = Decision
    decision: Decision = built
    return decision


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
