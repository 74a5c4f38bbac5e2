"""What a scope handler (files, fetch) is given, and what it is (SPEC §8)."""

from __future__ import annotations

from typing import Any, Protocol

from engine.core.checks import Passed
from engine.core.events import Event
from engine.core.state import State
from engine.store.base import Secrets

__all__ = ["ScopeHandler", "ScopeHost"]


class ScopeHost(Protocol):
    """What a scope handler reads while it works: the state, the time, the secrets."""

    @property
    def state(self) -> State:
        """Everything a decision reads (checked again when consent may have changed)."""
        ...

    @property
    def secrets(self) -> Secrets:
        """Secrets a fetch fills in by placeholder."""
        ...

    def now(self) -> float:
        """The engine's time."""
        ...

    def notify(self, event: Event) -> None:
        """Send an event no state change stands behind (a file changed)."""
        ...


class ScopeHandler(Protocol):
    """Performs file or network calls inside their scope (SPEC §8)."""

    def __call__(self, host: ScopeHost, passed: Passed, args: dict[str, Any], /) -> Any:
        """Return the call's value (for net.fetch, an awaitable), or a refusing Decision."""
        ...
