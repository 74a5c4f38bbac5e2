"""Who may change consent (SPEC §4.5), and the consent history every attempt goes into.

Only an operator gives consent; narrowing (revoke, removing arrows and
nodes, deleting a secret) is also accepted from agents and cards on the
canvas of what is narrowed. A refused attempt is recorded durably before
its error is raised.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from engine.core.errors import ApprovalRefused, ConsentError
from engine.core.principal import Principal
from engine.core.text import is_unicode
from engine.services.context import Context

__all__ = ["Guard"]


class Guard:
    """Principal checks and the consent history."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def history(self, principal: Principal, action: str, subject: dict[str, Any], *,
                accepted: bool = True, code: str | None = None, reason: str | None = None,
                detail: str = "") -> None:
        """Record a consent action in the history (inside a write).

        A refusal's ``detail`` quotes what was asked for, which may hold a lone
        surrogate (a permission, a hash): kept escaped, as text a store can hold,
        so the refusal is recorded and raised rather than failing the write.
        """
        if not is_unicode(detail):
            detail = detail.encode("utf-8", "backslashreplace").decode("utf-8")
        self.ctx.store.history.record(self.ctx.now(), str(principal), action, subject,
                                accepted=accepted, code=code, reason=reason, detail=detail)

    def refuse(self, principal: Principal, action: str, subject: dict[str, Any],
               error: ConsentError) -> ConsentError:
        """Record a refused consent attempt durably, and return the error to raise."""
        with self.ctx.write():
            self.history(principal, action, subject, accepted=False, code=error.code,
                         reason=error.reason, detail=error.message)
        return error

    def require_operator(self, by: object, action: str, subject: dict[str, Any]) -> Principal:
        """The operator ``by`` names; anyone else is refused (and the refusal recorded)."""
        principal = Principal.parse(by)
        if not principal.is_operator:
            reason = principal.refusal_reason()
            raise self.refuse(principal, action, subject, ApprovalRefused(
                f"{action} needs a person (operator), not {principal.raw!r}: "
                f"{reason}", reason=reason, package=subject.get("package")))
        return principal

    def require_narrowing(self, by: object, action: str, subject: dict[str, Any],
                          workspaces: str | Collection[str]) -> Principal:
        """Operators, and agents or cards on the canvas of what is narrowed, may narrow consent.

        ``workspaces``: the canvas (or canvases) the narrowed thing belongs to;
        an agent or card elsewhere is refused like an unknown principal (SPEC §4.5).
        """
        principal = Principal.parse(by)
        if principal.is_operator:
            return principal
        own = {workspaces} if isinstance(workspaces, str) else workspaces
        if principal.kind in ("agent", "card") and principal.node:
            node = self.ctx.state.canvas.node(principal.node)
            if node is not None and node.type == ("card" if principal.kind == "card"
                                                  else "agent") and node.workspace in own:
                return principal
        raise self.refuse(principal, action, subject, ApprovalRefused(
            f"{action} from {principal.raw!r}, which is not on this canvas: "
            "unknown-principal", reason="unknown-principal", package=subject.get("package")))
