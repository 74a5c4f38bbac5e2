"""Principals (SPEC §4.5): who asks for a consent change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["OPERATOR", "Principal"]


@dataclass(frozen=True, slots=True)
class Principal:
    """``operator`` (a person), ``agent:<id>``, ``card:<id>``, or unknown."""

    kind: Literal["operator", "agent", "card", "unknown"]
    node: str | None = None
    raw: str = ""

    @classmethod
    def parse(cls, value: object) -> Principal:
        """Parse a principal; anything unrecognised is ``unknown`` (fail closed)."""
        if isinstance(value, Principal):
            return value
        if value == "operator":
            return cls("operator", None, "operator")
        if isinstance(value, str):
            for kind in ("agent", "card"):
                prefix = kind + ":"
                if value.startswith(prefix) and len(value) > len(prefix):
                    return cls(kind, value[len(prefix):], value)  # type: ignore[arg-type,unused-ignore]
        return cls("unknown", None, str(value))

    @property
    def is_operator(self) -> bool:
        """Only an operator gives consent."""
        return self.kind == "operator"

    def refusal_reason(self) -> str:
        """Why this principal may not give consent: ``from-agent`` or ``unknown-principal``."""
        return "from-agent" if self.kind in ("agent", "card") else "unknown-principal"

    def __str__(self) -> str:
        return self.raw


OPERATOR = Principal("operator", None, "operator")
