"""The server's short way in and out for one request, as the lane sees it.

`engine.service.protocol` hands each request's scope a ``_Direct`` (and, for a
streamed answer, a ``_Stream``); the lane (`engine.service.fastlane`) and the
turns of taken calls (`engine.service.turns`) use them through these protocols.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from engine.service.events import Writer

if TYPE_CHECKING:
    import asyncio

    from starlette.types import ASGIApp

    from engine.service.auth import TokenMemo

__all__ = ["Direct", "Stream"]


class Direct(Protocol):
    """The server's short way in and out for one request (`engine.service.protocol._Direct`)."""

    def stream(self, head: bytes) -> Stream | None:
        """Begin a streamed answer; None (nothing sent) when ASGI's way must be used."""

    def body(self) -> bytes | None:
        """The whole body if it has all arrived, else None."""

    def respond(self, status: int, head: bytes, body: bytes) -> bool:
        """Send the whole answer; False (nothing sent) when ASGI's way must be used."""

    def idle(self) -> None:
        """The request writes nothing more, it only waits: not counted in flight."""

    @property
    def token_memo(self) -> TokenMemo:
        """The connection's memo of its ``Authorization`` header (`TokenStore.recall`)."""

    def lost(self) -> asyncio.Future[None]:
        """Done when the connection is lost; shared by its requests (never cancel it).
        Each call is matched by one `unwatch` when the wait ends."""

    def unwatch(self) -> None:
        """A wait that asked for `lost` has ended."""

    def run(self, app: ASGIApp) -> None:
        """Answer through ASGI after all: ``app`` runs as the request's task (a request
        `FastLane.take` took, which has none)."""


class Stream(Writer, Protocol):
    """A streamed answer's body (`engine.service.protocol._Stream`)."""

    def end(self) -> None:
        """The body is complete."""
