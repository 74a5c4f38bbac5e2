"""The decision on one call, as a value."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from engine.core.errors import ConsentError, with_code
from engine.core.text import clipped, named

__all__ = ["CallDenied", "Decision", "NO_EXTRA", "Outcome", "Words", "accepted", "refusal",
           "refused_head"]

#: A refusal's explanation before it is written out: a function of the
#: refusal and the values that follow it, giving (why, fix) (see `refusal`).
Words = tuple[Callable[..., tuple[str, str]], *tuple[Any, ...]]


class _NoExtra(Mapping[str, Any]):
    """The empty, read-only mapping `NO_EXTRA`: one object, pickled by its name."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __contains__(self, key: object) -> bool:
        return False  # without Mapping's KeyError raised and caught

    def __repr__(self) -> str:
        return "{}"

    def __reduce__(self) -> str:
        return "NO_EXTRA"  # unpickled as this module's NO_EXTRA itself


#: A decision's ``extra`` when it has none: one shared, read-only mapping.
#: An empty dict built for every refusal, and freed with it, cost ~330
#: instructions of a decision made right after a consent change (a fifth of
#: what the rest of the refusal cost); a decision is a value, and what its
#: ``extra`` carries is given when it is made (`Decision.with_`).
NO_EXTRA: Mapping[str, Any] = _NoExtra()

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
    #: What the engine notes beside the decision (read-only; `NO_EXTRA` when nothing).
    extra: Mapping[str, Any] = field(default_factory=lambda: NO_EXTRA)
    #: A refusal's words until its message is written (see `refusal`), then None.
    _words: Words | None = field(default=None, init=False, repr=False, compare=False)

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
        s[14](out, None)  # the copy's message was read above, so it is written
        return out

    def to_json(self, *, nulls: bool = False) -> dict[str, Any]:
        """The stable JSON form of this decision; ``nulls``: every field, null when
        unset (what the service answers, and the command line prints whichever
        way it reaches the engine), else ``retry_after``, ``prompt`` and
        ``value`` only when set."""
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
        if nulls:
            out["retry_after"], out["prompt"], out["value"] = \
                self.retry_after, self.prompt, self.value
            return out
        if self.retry_after is not None:
            out["retry_after"] = self.retry_after
        if self.prompt is not None:
            out["prompt"] = self.prompt
        if self.value is not None:
            out["value"] = self.value
        return out


class _Message:
    """`Decision.message`: its slot, or a refusal's words written out the first time it is read.

    Put in place of the slot's own descriptor, so that `Decision` needs no
    ``__getattr__``: with one, CPython reads every attribute of a Decision
    through the slow generic hook (the interpreter specialises attribute
    reads only for types without it), a ``decision.code`` costing more
    than all the stores that built the refusal.
    """

    __slots__ = ("_get", "_set", "_delete")

    def __init__(self, slot: Any) -> None:
        self._get, self._set, self._delete = slot.__get__, slot.__set__, slot.__delete__

    def __get__(self, decision: Decision | None, owner: type | None = None) -> Any:
        if decision is None:
            return self
        try:
            return self._get(decision)
        except AttributeError:  # unset: a refusal made by `refusal`, its words kept
            words = _WORDS_GET(decision)
            if words is None:
                raise
        text = _write(decision, words)
        self._set(decision, text)
        _WORDS_SET(decision, None)
        return text

    def __set__(self, decision: Decision, value: str) -> None:
        self._set(decision, value)

    def __delete__(self, decision: Decision) -> None:
        self._delete(decision)


_WORDS_GET = Decision.__dict__["_words"].__get__
_WORDS_SET = Decision.__dict__["_words"].__set__
#: The setters of `Decision`'s slots, in the order of its fields (`Decision.with_`):
#: the slots' own, ``message``'s too (taken before `_Message` is put in its place:
#: a builder storing a message it has needs no Python call).
_SLOT_SETTERS = tuple(Decision.__dict__[f.name].__set__ for f in fields(Decision))
#: The ``message`` slot's own descriptor, before `_Message` takes its place.
_MESSAGE_SLOT = Decision.__dict__["message"]
# By setattr: mypy would take ``Decision.message = ...`` for a default of the field.
setattr(Decision, "message", _Message(_MESSAGE_SLOT))

# `with_` lists the fields by position: fail at import if they ever change.
if tuple(f.name for f in fields(Decision)) != ('outcome', 'call', 'card', 'package', 'target', 'permission', 'code', 'reason', 'arrow', 'message', 'retry_after', 'value', 'prompt', 'extra', '_words'):
    raise ImportError("engine.core.decision.Decision.with_ does not match its fields")


def refused_head(decision: Decision) -> str:
    """A refusal's message up to its reason: ``CODE: card C (P) may not CALL TARGET``,
    each name as `named` quotes it (cut past `NAMED` characters, with its length)."""
    card, package, target = decision.card, decision.package, decision.target
    who = (f"card {named(card)} ({named(package)})" if package else f"card {named(card)}") \
        if card else "the caller"
    what = f"{named(decision.call)} {named(target)}" if target else named(decision.call)
    return with_code(decision.code or "", f"{who} may not {what}")


def _write(decision: Decision, words: Words) -> str:
    """The message of a refusal: who may not do what, the reason, why and what would allow it.

    The one place a refusal's message is written, so the one place it is bounded
    whatever the caller sent: each name quoted through `named`, and why and fix
    (which the checks write, naming ids with `named` too) `clipped` to a line each.
    """
    why, fix = words[0](decision, *words[1:])
    text = refused_head(decision)
    if decision.reason:
        text += f": {named(decision.reason)}"
    if why:
        text += f" — {clipped(why)}"
    if fix:
        text += f"; {clipped(fix)}"
    return text


class _Unfrozen(Decision):
    """A Decision without the frozen ``__setattr__`` or the fields' ``__init__``: see `refusal`.

    A subclass adding no slots, so CPython finds the two layouts the same by
    walking to their common base when `refusal` gives the object its class
    (a twin class's ``__slots__`` were compared name by name there, a third
    of a cold refusal's building).
    """

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__
    __init__ = object.__init__


# The slot's own descriptor in front of `_Message`: a builder's store of a
# message is then a plain slot store (`accepted`), not a Python call.
setattr(_Unfrozen, "message", _MESSAGE_SLOT)


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
    built: Any = _Unfrozen()  # a class call: cheaper than object.__new__(_Unfrozen)
    built.outcome = "rate-limited" if code == "RATE_LIMITED" else "denied"
    built.call = call
    built.card = card
    built.package = package
    built.target = target
    built.permission = permission
    built.code = code
    built.reason = reason
    built.arrow = arrow
    # ``message`` stays unset: `_Message` writes it on first read.
    built.retry_after = retry_after
    built.value = None
    built.prompt = None
    built.extra = NO_EXTRA
    built._words = words
    built.__class__ = Decision
    decision: Decision = built
    return decision


def accepted(outcome: Outcome, call: str, card: str, package: str, target: str | None,
             permission: str | None, arrow: str | None, message: str, value: Any,
             prompt: str | None) -> Decision:
    """An allowed call's Decision (no code, reason or retry), built as `refusal` builds one.

    The same value as ``Decision(outcome, call, card, package, target,
    permission, arrow=arrow, message=message, value=value, prompt=prompt)``
    at a fraction of the frozen ``__init__``'s cost: every accepted prompt
    makes one.
    """
    built: Any = _Unfrozen()
    built.outcome = outcome
    built.call = call
    built.card = card
    built.package = package
    built.target = target
    built.permission = permission
    built.code = None
    built.reason = None
    built.arrow = arrow
    built.message = message
    built.retry_after = None
    built.value = value
    built.prompt = prompt
    built.extra = NO_EXTRA
    built._words = None
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
