"""SPEC §3, §10.1: an event a card's stream kept for later (a client that pushed back, a
resumption with ``Last-Event-ID``) is written only if the card may see it as the
store stands when it is written: once another engine removed the arrow it came
by, it is never written, though this engine made no operation since.

Rule: events are gated when sent, and a change of consent holds on every engine
of the store from the moment it commits (SPEC §10); before a stream writes what
it kept, it catches up with the store (one ``pragma data_version`` on SQLite,
one short query on PostgreSQL), and a store that cannot be read ends the stream
with nothing written.

(Found in round 22: the stream judged its backlog on this engine's state as it
stood, which takes in another engine's commits only at its next operation or
timer tick; a tool call kept for a client that pushed back, or asked for again
with ``Last-Event-ID``, reached the card after the arrow was removed through
another server.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from engine import StoreFailed, file_digests
from engine.service.events import CardFeed

_TOOLS = {"name": "acme.t", "version": "1.0.0", "permissions": {},
          "tools": [{"name": "echo", "input": {"type": "object"}}]}


class _Writer:
    """A connection for `CardFeed.serve`: what it was sent, and whether it takes more."""

    def __init__(self, *, paused: bool = False) -> None:
        self.sent: list[bytes] = []
        self.paused = paused
        self.drained = asyncio.Event()
        if not paused:
            self.drained.set()

    def writable(self) -> bool:
        return not self.paused

    def gone(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    async def drain(self) -> None:
        await self.drained.wait()

    def resume(self) -> None:
        self.paused = False
        self.drained.set()

    def events(self) -> list[str]:
        return [line[len(b"event: "):].decode() for line in b"".join(self.sent).splitlines()
                if line.startswith(b"event: ")]


async def _wired(make_engine: Any, tmp_path: Path) -> tuple[Any, CardFeed]:
    """Engine A with agent a1 wired by arrow e1 to card c1 (tool ``echo``), c1's feed, and
    a tool call of a1's kept in it."""
    a = make_engine()
    await a.create_workspace("w1", str(tmp_path))
    await a.offer("acme.t", _TOOLS, file_digests({"manifest.json": json.dumps(_TOOLS)}))
    await a.install("acme.t")
    await a.add_node({"id": "c1", "type": "card", "package": "acme.t"}, workspace="w1")
    await a.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await a.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    feed = CardFeed(a, "c1")
    assert (await a.tool("a1", "c1", "echo", {"secret": 1})).allowed
    assert [event.type for _seq, event in feed.ring] == ["tool.call"]
    return a, feed


async def _served(feed: CardFeed, out: _Writer, last: int | None,
                  resume: asyncio.Event | None = None) -> list[str]:
    """What ``feed.serve`` writes to ``out`` from after ``last`` in a moment; a paused
    ``out`` takes more once ``resume`` is set (None: after a moment)."""
    closing = asyncio.Event()
    gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    serving = asyncio.ensure_future(feed.serve(out, last, heartbeat=60, closing=closing,
                                               gone=gone))
    await asyncio.sleep(0.1)
    if resume is not None:
        await resume.wait()
    out.resume()
    await asyncio.sleep(0.1)
    closing.set()
    await asyncio.wait_for(serving, 10)
    return out.events()


async def _streamed(feed: CardFeed, last: int | None) -> list[str]:
    """What ``feed.stream`` yields from after ``last`` in a moment."""
    chunks: list[bytes] = []

    async def read() -> None:
        async for chunk in feed.stream(last, heartbeat=60, closing=asyncio.Event()):
            chunks.append(chunk)

    reading = asyncio.ensure_future(read())
    await asyncio.sleep(0.1)
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)
    return [line[len(b"event: "):].decode() for line in b"".join(chunks).splitlines()
            if line.startswith(b"event: ")]


async def test_a_backlog_is_not_written_once_another_engine_removed_its_arrow(
        make_engine: Any, tmp_path: Path) -> None:
    a, feed = await _wired(make_engine, tmp_path)
    out = _Writer(paused=True)  # the client pushes back: the call waits in the ring
    # It takes more only once the arrow is gone, however long that takes on a
    # loaded machine (a fixed moment let the backlog out before the removal).
    removed = asyncio.Event()
    serving = asyncio.ensure_future(_served(feed, out, None, removed))
    await asyncio.sleep(0.05)
    assert (await a.tool("a1", "c1", "echo", {"secret": 2})).allowed
    assert out.events() == []
    await make_engine().remove_arrow("e1")
    removed.set()
    written = await serving
    assert "tool.call" not in written, f"a tool call reached c1 after its arrow went: {written}"


@pytest.mark.parametrize("path", ["serve", "stream"])
async def test_a_resumption_is_judged_after_another_engine_removed_the_arrow(
        make_engine: Any, tmp_path: Path, path: str) -> None:
    _a, feed = await _wired(make_engine, tmp_path)
    await make_engine().remove_arrow("e1")
    if path == "serve":
        written = await _served(feed, _Writer(), feed.base)
    else:
        written = await _streamed(feed, feed.base)
    assert "tool.call" not in written, f"a tool call reached c1 after its arrow went: {written}"


@pytest.mark.parametrize("path", ["serve", "stream"])
async def test_a_store_that_cannot_be_read_ends_the_stream_with_nothing_written(
        make_engine: Any, tmp_path: Path, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    a, feed = await _wired(make_engine, tmp_path)

    def unreadable() -> None:
        raise StoreFailed("the store cannot be reached")

    monkeypatch.setattr(a._ctx.store, "sync", unreadable)
    if path == "serve":
        written = await _served(feed, _Writer(), feed.base)
    else:
        written = await _streamed(feed, feed.base)
    assert "tool.call" not in written, f"a tool call nobody could judge was written: {written}"
