"""Asking a person before consenting, as the write verbs do: what is consented to is shown
(inert) where the person reads it, then a ``[y/N]`` question, whose "no" changes nothing.

Under ``--json`` both go to standard error, so that standard output holds the
verb's JSON answer alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from engine.app.writetext import shown

__all__ = ["Answer", "Asking"]

#: What a verb answers: its exit code, its JSON answer and its text answer.
Answer = tuple[int, Any, str]


@dataclass(frozen=True, slots=True)
class Asking:
    """Where a verb shows what is consented to, and how it asks the person to confirm."""

    out: TextIO  #: standard output, or standard error under ``--json``
    confirm: Callable[[str], None]  #: asks the question; raises `Failure` on a "no"

    def show(self, text: str) -> None:
        """Show ``text`` to the person, inert (what is consented to)."""
        print(shown(text), file=self.out, flush=True)
