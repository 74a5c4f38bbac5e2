"""Error codes and the one exception tree of arrowgate.

Refused calls are *values* (`engine.core.decision.Decision`); exceptions are for
refused consent actions and misuse. Every exception carries the same data a
decision does, as keyword-only context::

    ConsentError                 base: .code .reason .permission .card .package
     ├── CallDenied              a call's Decision, raised by Decision.raise_for_outcome()
     │                           (in `engine.core.decision`, beside the Decision it carries:
     │                           defined here it would make this module and that one
     │                           import each other)
     ├── ApprovalRefused         APPROVAL_REFUSED (from-agent, unknown-principal, stale, undeclared)
     ├── RequestRefused          REQUEST_REFUSED (not-visible, not-optional)
     ├── ManifestInvalid         MANIFEST_INVALID, with every problem and its JSON path
     ├── InvalidRequest          INVALID_ARROW, INVALID_NODE, INVALID_ARGUMENT, CARD_UNKNOWN,
     │                           PACKAGE_NOT_INSTALLED, PACKAGE_PENDING, NOT_FOUND, ...
     ├── CaseInvalid             a replay case file that is not valid
     └── StoreFailed             STORE_FAILED: a consent change or log row could not be written
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CODES",
    "ApprovalRefused",
    "CaseInvalid",
    "ConsentError",
    "InvalidRequest",
    "ManifestInvalid",
    "RequestRefused",
    "StoreFailed",
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
    "CARD_LIMIT": "a spawn cap or the workspace card cap is reached",
    "QUEUE_FULL": "the agent's prompt queue holds 20 undelivered prompts",
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
    "STORE_FAILED": "the change could not be written durably, so it did not happen",
}


class ConsentError(Exception):
    """Base of every arrowgate error.

    Attributes mirror a decision's so callers can match on ``code`` and
    ``reason`` whatever raised.
    """

    code: str = "CONSENT_ERROR"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        reason: str | None = None,
        permission: str | None = None,
        card: str | None = None,
        package: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.reason = reason  #: machine-readable reason, e.g. ``from-agent``
        self.permission = permission  #: the permission concerned, where one applies
        self.card = card  #: the card concerned
        self.package = package  #: the card's package
        self.details = details or {}  #: anything else (problems, retry_after, ...)

    @property
    def message(self) -> str:
        """The message a person reads."""
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

    def __init__(self, message: str, *, problems: list[tuple[str, str]],
                 package: str | None = None) -> None:
        super().__init__(message, package=package,
                         details={"problems": [{"path": p, "problem": m} for p, m in problems]})
        self.problems = problems  #: (JSON path, what is wrong), in order


class InvalidRequest(ConsentError):
    """An operation the engine cannot perform as asked; ``code`` says why."""


class CaseInvalid(ConsentError):
    """A replay case file that is not valid: names the file, the step and the field."""

    code = "CASE_INVALID"


class StoreFailed(ConsentError):
    """The store refused a write, so the call or change did not happen (fail closed)."""

    code = "STORE_FAILED"
