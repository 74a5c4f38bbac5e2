"""Who may change consent (SPEC §4.5), and the consent history every attempt goes into.

Only an operator gives consent; narrowing (revoke, removing arrows and
nodes, deleting a secret) is also accepted from agents and cards on the
canvas of what is narrowed. A refused attempt is recorded durably before
its error is raised.

No card or agent can fill the history by asking (SPEC §8 "Bounds", as for refused
calls): a refused attempt of anyone but the operator keeps at most 4 KiB of what it
asked (`bounded_subject`, `bounded_detail`), and beyond its workspace's
``denial_log_limit`` such attempts of one principal in any 60 s are still refused but
only counted, summed up in one ``suppressed`` entry before that principal's next entry
and at close (`Guard.flush_suppressed`). The count is kept in memory: a process killed
meanwhile loses it (never an entry of consent given or refused to a person).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from typing import Any

from canvas.model import WorkspaceSettings
from engine.core.errors import ApprovalRefused, ConsentError
from engine.core.limits import DenialLog, Suppressed
from engine.core.principal import Principal
from engine.core.text import is_unicode
from engine.services.context import Context

__all__ = ["SUBJECT_KEPT", "Guard", "bounded_detail", "bounded_subject"]

#: The most bytes of JSON a refused attempt's subject keeps as it is; a larger one is
#: cut to its first `_HEAD` characters, with its full length and SHA-256.
SUBJECT_KEPT = 4096
_HEAD = 1024
#: The fields of a subject a cut one keeps (short text only): what the history is
#: read by (`ConsentHistory.entries(package=...)`) and what a person looks for.
_NAMES = ("package", "node", "arrow", "workspace", "permission")
_NAME_KEPT = 128
#: The most characters a refused attempt's detail (its error's message) keeps.
_DETAIL_KEPT = 1024
#: The budget shared by principals naming no node on the canvas (made-up ids gain
#: nothing), and the principal its summary is recorded under.
_SHARED = None
_SHARED_PRINCIPAL = "unknown"
#: The shared budget's limit: a workspace's default, read once (as the log's is,
#: `engine.services.record`), not a settings object built for each attempt.
_SHARED_LIMIT = WorkspaceSettings().denial_log_limit


def bounded_subject(subject: dict[str, Any]) -> dict[str, Any]:
    """``subject`` when its JSON is at most `SUBJECT_KEPT` bytes; else its short names
    and ``cut``: the JSON's first 1,024 characters, its length and its SHA-256."""
    text = json.dumps(subject, sort_keys=True)  # ASCII: characters are bytes
    if len(text) <= SUBJECT_KEPT:
        return subject
    out: dict[str, Any] = {name: subject[name] for name in _NAMES
                           if type(subject.get(name)) is str
                           and len(subject[name]) <= _NAME_KEPT}
    out["cut"] = {"json": text[:_HEAD], "length": len(text),
                  "sha256": hashlib.sha256(text.encode()).hexdigest()}
    return out


def bounded_detail(detail: str) -> str:
    """A refusal's message, cut to `_DETAIL_KEPT` characters and marked when longer."""
    if len(detail) <= _DETAIL_KEPT:
        return detail
    return f"{detail[:_DETAIL_KEPT]}… [cut: {len(detail)} characters in all]"


class Guard:
    """Principal checks and the consent history."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: Refused attempts recorded one by one, per principal (`_budget_of`).
        self._denials = DenialLog()
        #: Refused attempts counted since their principal's last entry, by budget key.
        self._pending: dict[str | None, tuple[str, Suppressed]] = {}

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
        if not principal.is_operator:
            key = self._budget_of(principal)[0]
            if key in self._pending:
                self._write_summary(key)
        self.ctx.store.history.record(self.ctx.now(), str(principal), action, subject,
                                accepted=accepted, code=code, reason=reason, detail=detail)

    def refuse(self, principal: Principal, action: str, subject: dict[str, Any],
               error: ConsentError) -> ConsentError:
        """Record a refused consent attempt durably, and return the error to raise.

        A card's, agent's or unknown principal's is bounded (see the module): what it
        asked is cut, and one beyond its ``denial_log_limit`` is only counted.
        """
        if principal.is_operator:
            with self.ctx.write():
                self.history(principal, action, subject, accepted=False, code=error.code,
                             reason=error.reason, detail=error.message)
            return error
        key, limit = self._budget_of(principal)
        t = self.ctx.now()
        if not self._denials.admit(key, t, limit):
            # Answered as refused all the same; nothing is written for it now.
            held = self._pending.get(key)
            if held is None:
                held = self._pending[key] = (
                    str(principal) if key is not _SHARED else _SHARED_PRINCIPAL,
                    Suppressed(None, None, None, t, t))
            held[1].add(t, error.code, action)
            return error
        with self.ctx.write():
            self.history(principal, action, bounded_subject(subject), accepted=False,
                         code=error.code, reason=error.reason,
                         detail=bounded_detail(error.message))
        return error

    def flush_suppressed(self) -> None:
        """Write the summary entry of every principal's counted attempts (at close)."""
        if not self._pending:
            return
        with self.ctx.write_settled():
            for key in sorted(self._pending, key=lambda k: k or ""):
                self._write_summary(key)

    def _budget_of(self, principal: Principal) -> tuple[str | None, int]:
        """The budget key of ``principal``'s refused attempts (its own when it names a
        node on the canvas, else the shared one) and its limit in any 60 s."""
        node = self.ctx.state.canvas.node(principal.node) if principal.node else None
        if node is None or principal.kind not in ("agent", "card"):
            return _SHARED, _SHARED_LIMIT
        return str(principal), self.ctx.state.workspace_of(node).settings.denial_log_limit

    def _write_summary(self, key: str | None) -> None:
        """Record the ``suppressed`` entry of ``key``'s counted attempts (inside a write)."""
        who, held = self._pending.pop(key)
        codes = sorted(held.codes)
        self.ctx.store.history.record(
            held.last, who, "suppressed",
            {"count": held.count, "codes": dict(sorted(held.codes.items())),
             "actions": dict(sorted(held.calls.items())), "first": held.first,
             "last": held.last},
            accepted=False, code=codes[0] if len(codes) == 1 else None, reason="suppressed",
            detail=f"{held.count} refused consent attempts not recorded one by one")

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
