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
        """Parse a principal; anything unrecognised is ``unknown`` (fail closed).

        Only a plain `str` is read, compared exactly: a subclass or another
        object could answer ``==`` (or ``startswith``) as it likes, so it is
        ``unknown`` whatever it claims, and so is a `Principal` subclass.
        """
        if type(value) is Principal:
            return value
        if type(value) is not str:
            return cls("unknown", None, _shown(f"<{type(value).__name__}>"))
        if not value.isascii() or len(value) > _LONGEST:
            # Recorded in the consent history as given, so it must be text
            # SQLite can store (no lone surrogates) and of a bounded size.
            shown = _shown(value)
            if shown != value:
                return cls("unknown", None, shown)
        if value == "operator":
            return cls("operator", None, "operator")
        for kind in ("agent", "card"):
            prefix = kind + ":"
            if value.startswith(prefix) and len(value) > len(prefix):
                return cls(kind, value[len(prefix):], value)  # type: ignore[arg-type,unused-ignore]
        return cls("unknown", None, value)

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

#: The longest principal kept as given; longer ones are unknown, shown cut.
_LONGEST = 1024


def _shown(text: str) -> str:
    """``text`` as storable text: lone surrogates escaped, at most `_LONGEST` characters."""
    clean = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return clean if len(clean) <= _LONGEST else clean[:_LONGEST] + "…"
