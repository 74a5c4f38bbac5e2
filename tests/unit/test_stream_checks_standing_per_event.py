"""A card's event stream confirms its token again before it sends an event, once the
token's standing was last confirmed `CACHE_SECONDS` ago: a revocation made through
another server on the store ends it before that event, on either way of writing.

(Found by a helper, m15: the stream asked the store only once a heartbeat, 15 s by
default, and wrote each event in between as long as the token was not revoked on
this server itself.)
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from engine import Engine
from engine.service.auth import CACHE_SECONDS, TokenStore
from engine.service.events import Feeds


class _Out:
    """A direct stream's connection that takes everything at once."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def writable(self) -> bool:
        return True

    def gone(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    async def drain(self) -> None:
        return None


async def _turns(n: int = 5) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def _an_event_for_c1(world: Engine, grant: bool) -> None:
    verb = world.grant if grant else world.revoke
    await verb("acme.prompter", "clipboard.write")
    await _turns()


async def test_a_direct_stream_sends_no_event_once_the_store_says_revoked(
        world: Engine) -> None:
    """`CardFeed.serve`: the event after a revocation elsewhere is not written; the
    stream ends (the heartbeat is an hour away: not what ended it)."""
    now = [1000.0]
    tokens = TokenStore(world.store.tokens(), clock=lambda: now[0])
    token_id, token = await tokens.mint("card:c1")
    assert tokens.lookup(token) is not None
    standing = tokens.standing(token, token_id)
    out = _Out()
    gone: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    feed = Feeds(world).get("c1")
    served = asyncio.create_task(feed.serve(out, None, heartbeat=3600,
                                            closing=asyncio.Event(), gone=gone,
                                            standing=standing))
    await _turns()
    # GIVEN the stream delivers c1's events while its token stands
    await _an_event_for_c1(world, grant=True)
    assert any(b"event: " in w for w in out.written), out.written
    sent = len(out.written)
    # WHEN another server revokes the token, the cache's seconds pass, and c1 has an event
    world.store.tokens().revoke(token_id, time.time())
    now[0] += CACHE_SECONDS
    await _an_event_for_c1(world, grant=False)
    # THEN nothing more was written, and the stream ended
    assert out.written[sent:] == []
    await asyncio.wait_for(served, 5)
    assert standing.revoked.done()
    standing.close()


async def test_a_streamed_response_yields_no_event_once_the_store_says_revoked(
        world: Engine) -> None:
    """`CardFeed.stream` (FastAPI's route): the same, one event at a time."""
    now = [1000.0]
    tokens = TokenStore(world.store.tokens(), clock=lambda: now[0])
    token_id, token = await tokens.mint("card:c1")
    assert tokens.lookup(token) is not None
    standing = tokens.standing(token, token_id)
    feed = Feeds(world).get("c1")
    frames = feed.stream(None, heartbeat=3600, closing=asyncio.Event(), standing=standing)
    assert (await anext(frames)).startswith(b": arrowgate events")
    # GIVEN the stream delivers c1's events while its token stands
    pending = asyncio.ensure_future(anext(frames))
    await _an_event_for_c1(world, grant=True)
    assert b"event: " in await asyncio.wait_for(pending, 5)
    # WHEN another server revokes the token, the cache's seconds pass, and c1 has an event
    pending = asyncio.ensure_future(anext(frames))
    await _turns()
    world.store.tokens().revoke(token_id, time.time())
    now[0] += CACHE_SECONDS
    await _an_event_for_c1(world, grant=False)
    # THEN the stream ends without yielding it
    try:
        got = await asyncio.wait_for(pending, 5)
    except StopAsyncIteration:
        got = None
    assert got is None, got
    standing.close()
