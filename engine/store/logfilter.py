"""What rows of the arrow log a viewer shows (`LogFilter`), for both stores' readers.

Kept apart from `engine.store.logindex` so that the PostgreSQL reader
(`engine.store.pg.logindex`) and the SQLite one share it without importing
each other.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["TIMELINE_KIND", "LogFilter"]


@dataclass(frozen=True, slots=True)
class LogFilter:
    """What rows to show; None means any."""

    arrow: str | None = None
    card: str | None = None
    package: str | None = None
    call: str | None = None
    outcome: str | None = None
    since: float | None = None
    until: float | None = None
    target: str | None = None  #: the node called (an agent, a terminal, a card, a host)
    #: free text, case-insensitive, in the payload, card, target, call, code or reason
    text: str | None = None

    @property
    def empty(self) -> bool:
        """No condition at all."""
        return all(getattr(self, f.name) is None for f in fields(self))

    def where(self, dialect: str = "sqlite") -> tuple[str, list[Any]]:
        """The SQL condition and its parameters, for ``sqlite`` or ``postgresql``."""
        if dialect not in ("sqlite", "postgresql"):
            raise ValueError(f"no SQL dialect {dialect!r} (sqlite or postgresql)")
        mark = "?" if dialect == "sqlite" else "%s"
        parts, params = [], []
        for col in ("arrow", "card", "package", "call", "outcome", "target"):
            value = getattr(self, col)
            if value is not None:
                parts.append(f"{col} = {mark}")
                params.append(value)
        if self.since is not None:
            parts.append(f"t >= {mark}")
            params.append(self.since)
        if self.until is not None:
            parts.append(f"t <= {mark}")
            params.append(self.until)
        if self.text is not None:
            # instr (strpos), not like: the text is literal (no % or _ wildcards).
            find = "instr" if dialect == "sqlite" else "strpos"
            parts.append(f"{find}(lower(coalesce(payload, '') || ' ' || coalesce(card, '') || ' '"
                         " || coalesce(target, '') || ' ' || coalesce(call, '') || ' '"
                         " || coalesce(code, '') || ' ' || coalesce(reason, '')),"
                         f" lower({mark})) > 0")
            params.append(self.text)
        return (" and ".join(parts) or ("1" if dialect == "sqlite" else "true")), params


#: The timeline's kind of each outcome (`LogIndex.timeline`).
TIMELINE_KIND = {"ok": "allowed", "queued": "allowed", "approved": "allowed",
                  "denied": "refused", "rate-limited": "refused", "rejected": "refused",
                  "expired": "refused", "cancelled": "refused", "held": "held"}
