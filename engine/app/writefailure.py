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

__all__ = ["OK", "REFUSAL_CODES", "REFUSED", "USAGE", "Failure"]

#: Exit codes.
OK, REFUSED, USAGE = 0, 1, 2
#: Codes that mean "refused" (exit 1) rather than "invalid input" (exit 2).
REFUSAL_CODES = frozenset({"APPROVAL_REFUSED", "REQUEST_REFUSED", "STORE_FAILED",
                            "PERMISSION_DENIED", "RATE_LIMITED", "SCOPE_REFUSED"})


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

        Its JSON form is ``code``, ``reason`` (when given) and ``message``:
        ``json_text`` when given (one without the local path), else ``text``.
        """
        data: dict[str, Any] = {"code": code}
        if reason is not None:
            data["reason"] = reason
        data["message"] = text if json_text is None else json_text
        return cls(exit_code, with_code(code, text), data)
