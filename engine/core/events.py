"""Events the engine sends, and the result of an update."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.core.review import Diff

__all__ = ["Event", "EventSink", "Update"]


@dataclass(frozen=True, slots=True)
class Event:
    """Something a card or the app is told about (``permissions.changed``, ...)."""

    type: str
    card: str | None
    data: dict[str, Any]


EventSink = Callable[[Event], None]


@dataclass(frozen=True, slots=True)
class Update:
    """A package's pending version: its diff and the hash an approval must name."""

    package: str
    pending_hash: str
    diff: Diff
