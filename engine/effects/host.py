"""What a scope handler (confined files, guarded fetch) may use of the engine calling it.

The handlers are handed the engine on every call, but they depend only on
this narrow protocol, not on `engine.engine.Engine`: effects sit below the
façade and never import it (the layers contract in pyproject.toml). They read
the current state and the clock (catching up with other engines' commits when
a decision must agree with the store), look up a secret for the guarded fetch, and
report what they saw (file changes, a watch ending) as `Event` messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from engine.core.checks import Passed
    from engine.core.events import Event
    from engine.core.state import State

__all__ = ["ScopeHandler", "ScopeHost", "SecretLookup"]


class SecretLookup(Protocol):
    """The operator's stored secrets, as the guarded fetch reads them."""

    def lookup(self, name: str) -> tuple[str, str] | None:
        """(host, value) of the secret ``name``, or None when it is not set."""
        ...


class ScopeHost(Protocol):
    """The engine as a scope handler sees it."""

    @property
    def state(self) -> State:
        """The state a decision reads (workspaces, canvas, packages, grants)."""
        ...

    @property
    def secrets(self) -> SecretLookup:
        """The stored secrets (SPEC §8.2)."""
        ...

    def now(self) -> float:
        """The engine's time."""
        ...

    def sync(self) -> None:
        """Catch up with what other engines on the store committed (``state`` then shows it).

        Raises:
            EngineClosed: the engine was closed.
            StoreFailed: the store cannot be read.
        """
        ...

    def notify(self, event: Event) -> None:
        """Report something no state change stands behind (a file changed, a watch ended)."""
        ...


class ScopeHandler(Protocol):
    """Performs file or network calls inside their scope (SPEC §8)."""

    def __call__(self, host: ScopeHost, passed: Passed, args: dict[str, Any], /) -> Any:
        """Return the call's value (for net.fetch, an awaitable), or a refusing Decision."""
        ...
