"""Messages that cross screens: the engine's changes, as they arrive."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

__all__ = ["EngineChanged"]


@dataclass
class EngineChanged(Message, bubble=False):
    """The store changed (this process or another); screens refresh what they show.

    Bursts coalesce: a newer one replaces one still waiting in the queue.
    It does not bubble: the app forwards it to the screens, and a screen's
    copy must not come back to the app.
    """

    what: str = "store"  #: the engine event type, or ``store`` for another process

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, EngineChanged)
