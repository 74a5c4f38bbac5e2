"""An agent's tool list, followed: ``GET /v1/agents/{agent}/tools?wait=S`` with the
``ETag`` of the list the caller has answers once the list differs (SPEC §10.2).

``arrowgate mcp`` tells its client ``notifications/tools/list_changed`` when the
agent's tool list changes. Polled, that cost the service a whole listing for every
agent twice a second, whatever changed. Here the caller sends the list's tag
(`tag`) in ``If-None-Match`` and waits: the list is made again only when what it
is made from moved on — the canvas's revision or the consent revision (grants,
packages, settings; `State.consent_key`), or the state itself, reloaded — which
`ListChanges` looks at for all waiting requests together, a few ints every
`EVERY` seconds while any waits. A change another process made is seen once the
engine has caught up with the store, which the look does first.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import TYPE_CHECKING, Any

from engine.core.errors import StoreFailed

if TYPE_CHECKING:
    from engine.engine import Engine

__all__ = ["EVERY", "ListChanges", "matches", "tag"]

#: Seconds between looks at whether an agent's tool list may have changed.
EVERY = 0.1


def tag(tools: list[dict[str, Any]]) -> str:
    """The entity tag of a tool list (quoted, as ``ETag`` gives it): equal for equal lists."""
    text = json.dumps(tools, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return '"%s"' % hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def matches(if_none_match: str | None, current: str, *, star: bool = True) -> bool:
    """Whether an ``If-None-Match`` value names ``current`` (weak tags compare as strong:
    the list is the same list either way); ``*`` names any list, unless not ``star``
    (a wait follows the list a caller has, which ``*`` does not name)."""
    if not if_none_match:
        return False
    for part in if_none_match.split(","):
        part = part.strip()
        if (star and part == "*") or part.removeprefix("W/") == current:
            return True
    return False


class ListChanges:
    """Wakes the requests waiting for a tool list to change when what lists are made of
    may have changed (one look for all of them, `EVERY` seconds, while any waits)."""

    def __init__(self, engine: Engine, every: float = EVERY) -> None:
        self._engine, self._every = engine, every
        self._waiters: set[asyncio.Future[None]] = set()
        self._looking: asyncio.Task[None] | None = None
        self._seen: tuple[int, int, int] = (0, 0, 0)

    def _key(self) -> tuple[int, int, int]:
        state = self._engine.state
        return (id(state), *state.consent_key())

    async def next(self) -> None:
        """Return once what the tool lists are made of has moved on since this was called
        (or, rarely, without: the caller makes its list again and compares)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._looking is None:
            # Taken now, in the turn the caller made its list: a change after it is seen.
            self._seen = self._key()
            self._looking = asyncio.get_running_loop().create_task(self._look())
        self._waiters.add(future)
        try:
            await future
        finally:
            self._waiters.discard(future)

    async def _look(self) -> None:
        try:
            while self._waiters:
                await asyncio.sleep(self._every)
                try:
                    self._engine.catch_up()  # what other processes committed
                except StoreFailed:
                    continue  # the store is away: looked at again at the next round
                key = self._key()
                if key != self._seen:
                    self._seen = key
                    for future in self._waiters:
                        if not future.done():
                            future.set_result(None)
        finally:
            self._looking = None
