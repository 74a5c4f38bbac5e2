"""How a write verb fails: its exit codes and `Failure`, the error it answers with.

The write verbs (`engine.app.cli_write`) answer every error the same way, through
the engine (``--db``) or the service (``--service``): exit 1 for a refusal, 2 for
usage or invalid input, and the error's JSON form under ``--json``.
"""

from __future__ import annotations

from typing import Any

from engine.app.common import UNUSABLE_STORE
from engine.core.decision import CallDenied
from engine.core.errors import (
    ApprovalRefused,
    ConsentError,
    RequestRefused,
    StoreFailed,
    with_code,
)

__all__ = ["ERROR_KEYS", "OK", "REFUSAL_CODES", "REFUSED", "USAGE", "Failure", "error_json"]

#: Exit codes.
OK, REFUSED, USAGE = 0, 1, 2
#: Codes that mean "refused" (exit 1) rather than "invalid input" (exit 2).
REFUSAL_CODES = frozenset({"APPROVAL_REFUSED", "REQUEST_REFUSED", "STORE_FAILED",
                            "PERMISSION_DENIED", "RATE_LIMITED", "SCOPE_REFUSED"})


#: The keys of a coded error's JSON form, whichever way it was met (the engine's
#: `ConsentError.to_json`, the service's problem, a verb's own check): one verb's error
#: reads alike through ``--db`` and ``--service``.
ERROR_KEYS = ("card", "code", "message", "package", "permission", "reason")


def error_json(code: object, message: str, *, reason: object = None, permission: object = None,
               card: object = None, package: object = None) -> dict[str, Any]:
    """A coded error's JSON form: every key of `ERROR_KEYS`, its message with its code in
    front (`with_code`) once, as every engine error's message has."""
    if isinstance(code, str) and code and not message.startswith(with_code(code, "")):
        message = with_code(code, message)
    return {"card": card, "code": code, "message": message, "package": package,
            "permission": permission, "reason": reason}


class Failure(Exception):
    """A verb that did not happen: the exit code, the message, and its JSON form."""

    def __init__(self, exit_code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code  #: 1 refused, 2 usage or invalid input
        self.data = data or {"message": message}  #: the error as JSON

    @classmethod
    def of(cls, exc: ConsentError) -> Failure:
        """The failure of an engine error: refusals exit 1, invalid input 2 (a database
        this code cannot use among them, as on every verb: `UNUSABLE_STORE`)."""
        if isinstance(exc, StoreFailed) and exc.reason in UNUSABLE_STORE:
            return cls(USAGE, exc.message, exc.to_json())
        refused = isinstance(exc, (ApprovalRefused, RequestRefused, CallDenied, StoreFailed)) \
            or exc.code in REFUSAL_CODES
        return cls(REFUSED if refused else USAGE, exc.message, exc.to_json())

    @classmethod
    def coded(cls, exit_code: int, code: str, text: str, *, reason: str | None = None,
              json_text: str | None = None) -> Failure:
        """A failure with an error code: its message is ``CODE: text`` (`with_code`).

        Its JSON form is `error_json`'s, its message ``json_text`` when given (one
        without the local path), else ``text``.
        """
        data = error_json(code, text if json_text is None else json_text, reason=reason)
        return cls(exit_code, with_code(code, text), data)
