"""Error codes and the one exception tree of arrowgate.

Refused calls are *values* (`engine.core.decision.Decision`); exceptions are for
refused consent actions and misuse. Every exception carries the same data a
decision does, as keyword-only context. Each class raised has its code built
in and puts it in front of the message itself (`with_code`), so a raise site
writes neither: ``NotFound(f"no node {x!r}")`` reads ``NOT_FOUND: no node 'x'``::

    ConsentError                 base: .code .reason .permission .card .package
     ├── CallDenied              a call's Decision, raised by Decision.raise_for_outcome()
     │                           (in `engine.core.decision`, beside the Decision it carries:
     │                           defined here it would make this module and that one
     │                           import each other)
     ├── ApprovalRefused         APPROVAL_REFUSED (from-agent, unknown-principal, stale, undeclared)
     ├── RequestRefused          REQUEST_REFUSED (not-visible, not-optional)
     ├── ManifestInvalid         MANIFEST_INVALID, with every problem and its JSON path
     ├── InvalidRequest          an operation that cannot be done as asked, one class per code:
     │    ├── InvalidArgument    INVALID_ARGUMENT
     │    ├── InvalidArrow       INVALID_ARROW
     │    ├── InvalidNode        INVALID_NODE
     │    ├── NotFound           NOT_FOUND
     │    ├── CardUnknown        CARD_UNKNOWN
     │    ├── CardLimit          CARD_LIMIT
     │    ├── PackageNotInstalled  PACKAGE_NOT_INSTALLED
     │    └── PackagePending     PACKAGE_PENDING
     ├── CaseInvalid             a replay case file that is not valid
     └── StoreFailed             STORE_FAILED: a consent change or log row could not be written,
                                 or the store could not be read
          └── EngineClosed       STORE_FAILED, reason ``closed``: the engine was closed
"""

from __future__ import annotations

from typing import Any, ClassVar

from engine.core.text import clipped

__all__ = [
    "CODES",
    "ApprovalRefused",
    "CardLimit",
    "CardUnknown",
    "CaseInvalid",
    "ConsentError",
    "EngineClosed",
    "InvalidArgument",
    "InvalidArrow",
    "InvalidNode",
    "InvalidRequest",
    "MESSAGE_MAX",
    "ManifestInvalid",
    "NOT_WRITTEN",
    "NotFound",
    "PackageNotInstalled",
    "PackagePending",
    "RequestRefused",
    "StoreFailed",
    "with_code",
]

#: Every error code the engine gives, with what it means.
CODES: dict[str, str] = {
    "CARD_UNKNOWN": "the caller is not a custom card on any canvas",
    "PACKAGE_NOT_INSTALLED": "the card's package is not installed",
    "PACKAGE_PENDING": "the package's files changed and wait for a person's approval",
    "UNKNOWN_CALL": "no such call",
    "INVALID_ARGUMENT": "an argument is missing or of the wrong type",
    "PERMISSION_DENIED": "not declared, not granted, not connected or the wrong kind of target",
    "SCOPE_REFUSED": "outside the permission's scope (host, address, path)",
    "LOOP_REFUSED": "the prompt would loop back or exceed the hop limit",
    "RATE_LIMITED": "too many calls of this kind in the rolling window",
    "CARD_LIMIT": "a spawn cap, the workspace card cap or the card's calls under way is reached",
    "QUEUE_FULL": "the agent's prompt queue holds 20 undelivered prompts, or the agent has "
                  "256 tool calls open",
    "PROMPT_REJECTED": "a person rejected the held prompt",
    "HOLD_EXPIRED": "nobody answered the held prompt in time",
    "UNKNOWN_TOOL": "the card does not offer that tool",
    "TOOL_ERROR": "the card answered the tool call with an error",
    "TOOL_TIMEOUT": "the card did not answer the tool call within tool_timeout",
    "TOOL_CANCELLED": "the agent that called the tool gave up on it",
    "APPROVAL_REFUSED": "a consent action that this principal may not take, or that is stale",
    "REQUEST_REFUSED": "an optional-permission request that cannot be asked",
    "MANIFEST_INVALID": "the manifest fails validation",
    "INVALID_ARROW": "the arrow cannot exist",
    "INVALID_NODE": "the node cannot exist",
    "NOT_FOUND": "no such thing",
    "FETCH_FAILED": "the request could not be completed (timeout, connection)",
    "STORE_FAILED": "the change could not be written durably, so it did not happen; or the "
                    "store could not be read",
}


#: The most characters of an error's own text (`ConsentError`; a message given whole from
#: elsewhere, a Decision's or a case file's list of problems, is bounded there): a
#: backstop for a raise site that quotes a name someone else chose without
#: `engine.core.text.named`.
MESSAGE_MAX = 8000
#: What a failed change says first (`StoreFailed.not_done`).
NOT_WRITTEN = "the change was not written, so it did not happen"


def with_code(code: str, text: str) -> str:
    """``CODE: text``: the one place a message gets its error code in front."""
    return f"{code}: {text}"


class ConsentError(Exception):
    """Base of every arrowgate error.

    Attributes mirror a decision's so callers can match on ``code`` and
    ``reason`` whatever raised. ``message`` is ``text`` with the class's code
    in front (``NOT_FOUND: no node 'x'``); the raise site gives only ``text``.
    """

    code: str = "CONSENT_ERROR"
    #: Whether the message gets the code in front; off where the text comes whole
    #: from elsewhere (a Decision's message, a case file's list of problems).
    prefixed: ClassVar[bool] = True

    def __init__(
        self,
        text: str,
        *,
        reason: str | None = None,
        permission: str | None = None,
        card: str | None = None,
        package: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        if self.prefixed and len(text) > MESSAGE_MAX:
            # A raise site that quotes what a caller sent without `named`: its message
            # still reads as a few lines, not as megabytes (SPEC §5).
            text = clipped(text, MESSAGE_MAX)
        super().__init__(with_code(self.code, text) if self.prefixed else text)
        self.reason = reason  #: machine-readable reason, e.g. ``from-agent``
        self.permission = permission  #: the permission concerned, where one applies
        self.card = card  #: the card concerned
        self.package = package  #: the card's package
        self.details = details or {}  #: anything else (problems, retry_after, ...)

    @property
    def message(self) -> str:
        """The message a person reads, code first."""
        return str(self.args[0])

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form: code, reason, permission, card, package, message."""
        out: dict[str, Any] = {
            "code": self.code,
            "reason": self.reason,
            "permission": self.permission,
            "card": self.card,
            "package": self.package,
            "message": self.message,
        }
        out.update(self.details)
        return out


class ApprovalRefused(ConsentError):
    """A consent action refused: wrong principal, stale review, undeclared grant."""

    code = "APPROVAL_REFUSED"


class RequestRefused(ConsentError):
    """An optional-permission request that may not be asked."""

    code = "REQUEST_REFUSED"


class ManifestInvalid(ConsentError):
    """A manifest failed validation; ``problems`` lists each with its JSON path."""

    code = "MANIFEST_INVALID"

    def __init__(self, text: str, *, problems: list[tuple[str, str]],
                 package: str | None = None) -> None:
        super().__init__(text, package=package,
                         details={"problems": [{"path": p, "problem": m} for p, m in problems]})
        self.problems = problems  #: (JSON path, what is wrong), in order


class InvalidRequest(ConsentError):
    """An operation the engine cannot perform as asked; the subclass (and ``code``) says why.

    Catch this for all of them; raise one of the subclasses, which carry the code.
    """


class InvalidArgument(InvalidRequest):
    """INVALID_ARGUMENT: an argument is missing, of the wrong type or out of range."""

    code = "INVALID_ARGUMENT"


class InvalidArrow(InvalidRequest):
    """INVALID_ARROW: the arrow cannot exist (or there is no such arrow)."""

    code = "INVALID_ARROW"


class InvalidNode(InvalidRequest):
    """INVALID_NODE: the node cannot exist (unknown type, duplicate id, bad field)."""

    code = "INVALID_NODE"


class NotFound(InvalidRequest):
    """NOT_FOUND: no such node, workspace, package, prompt or tool call."""

    code = "NOT_FOUND"


class CardUnknown(InvalidRequest):
    """CARD_UNKNOWN: the caller is not a custom card on any canvas."""

    code = "CARD_UNKNOWN"


class CardLimit(InvalidRequest):
    """CARD_LIMIT: a spawn cap or the workspace card cap is reached."""

    code = "CARD_LIMIT"


class PackageNotInstalled(InvalidRequest):
    """PACKAGE_NOT_INSTALLED: the package is not installed."""

    code = "PACKAGE_NOT_INSTALLED"


class PackagePending(InvalidRequest):
    """PACKAGE_PENDING: the package's new files wait for a person's approval."""

    code = "PACKAGE_PENDING"


class CaseInvalid(ConsentError):
    """A replay case file that is not valid: names the file, the step and the field.

    Its message is the list of problems as is (each line names the file), with no code in front.
    """

    code = "CASE_INVALID"
    prefixed = False


class StoreFailed(ConsentError):
    """The store refused a write, so the call or change did not happen (fail closed), or
    could not be read (its message says which: `not_done` for a change whose read failed)."""

    code = "STORE_FAILED"

    def not_done(self) -> StoreFailed:
        """This failure of a read (a catch-up) told as the failure of the change that began
        with it: "the change was not written, so it did not happen: " and why, its
        reason kept. A read's own words say only that the store could not be read."""
        text = self.message.removeprefix(with_code(self.code, ""))
        return StoreFailed(f"{NOT_WRITTEN}: {text}", reason=self.reason,
                           permission=self.permission, card=self.card,
                           package=self.package, details=self.details)

    def standing(self, what: str) -> StoreFailed:
        """This failure of a person's action, saying plainly what stands as it was
        (``what``: "the grant of agents.prompt to acme.p stands"), its reason kept."""
        text = self.message.removeprefix(with_code(self.code, ""))
        return StoreFailed(f"{text.rstrip('. ')}. Not done: {what}", reason=self.reason,
                           permission=self.permission, card=self.card,
                           package=self.package, details=self.details)


class EngineClosed(StoreFailed):
    """The engine was closed: an operation, wait or read after (or across) `Engine.close`.

    A `StoreFailed` (nothing happened), with reason ``closed``, so that code
    handling a store that cannot take a change handles this too.
    """

    def __init__(self, text: str = "the engine is closed") -> None:
        super().__init__(text, reason="closed")
