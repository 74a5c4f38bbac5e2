"""Events the engine sends, and the result of an update."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.core.review import Diff

__all__ = ["Event", "EventSink", "Update", "event"]


@dataclass(frozen=True, slots=True)
class Event:
    """Something a card or the app is told about (``permissions.changed``, ...)."""

    type: str
    card: str | None
    data: dict[str, Any]


EventSink = Callable[[Event], None]


class _UnfrozenEvent:
    """`Event`'s slots without the frozen ``__setattr__``: see `event`."""

    __slots__ = Event.__slots__


def event(type: str, card: str | None, data: dict[str, Any]) -> Event:
    """``Event(type, card, data)`` at a third of the cost (as `engine.core.checks._passed`).

    The frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``; a twin with the same slots sets them plainly,
    then becomes an Event, as frozen as any other. A delivered prompt makes
    two (the agent's status, its turn).
    """
    # _UnfrozenEvent(), not object.__new__(...): a class call with no
    # arguments skips __new__'s argument checks.
    built: Any = _UnfrozenEvent()
    built.type = type
    built.card = card
    built.data = data
    built.__class__ = Event
    result: Event = built
    return result


@dataclass(frozen=True, slots=True)
class Update:
    """A package's pending version: its diff and the hash an approval must name."""

    package: str
    pending_hash: str
    diff: Diff
    #: Whether a version waits for approval: False when the files given were the
    #: installed version's own, and the engine kept nothing pending. Told by the update
    #: itself, as a reader of the package's state after it may see another's change.
    waiting: bool = True
