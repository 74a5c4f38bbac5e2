"""SPEC §10.1: an event's id is never given again by another feed of the card.

Rule: the ids a card's feed gives its events are its own: a feed made again for
the card (the old one ended, the server restarted, another server on the store)
never numbers an event with an id an earlier feed gave, whatever the clock says,
so a client resuming with ``Last-Event-ID`` from another feed is told
``events.dropped`` and then gets the live stream — never resumed silently in the
middle of events it never had.

(Found in round 23: ids were the feed's making time in milliseconds times 1000
plus a count, so two feeds made in one millisecond, or on a clock set back, gave
the same ids; a client resuming with the old feed's id skipped the new feed's
first events without a word.)
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

from engine import Engine, World, file_digests
from engine.service import events
from engine.service.events import CardFeed


async def _tool_engine(tmp_path: Any) -> Engine:
    tools = {"name": "acme.t", "version": "1.0.0", "permissions": {},
             "tools": [{"name": "echo", "input": {"type": "object"}}]}
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    await engine.create_workspace("w1", str(tmp_path))
    await engine.offer("acme.t", tools, file_digests({"manifest.json": json.dumps(tools)}))
    await engine.install("acme.t")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.t"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    return engine


def _stop_the_feeds_clock(monkeypatch: Any) -> None:
    """The feeds' module sees one moment for ever (whether it reads the time or not)."""
    monkeypatch.setattr("engine.service.events.time",
                        SimpleNamespace(time=lambda: 1_700_000_000.0), raising=False)


async def _numbered(engine: Engine, feed: CardFeed, count: int) -> list[int]:
    """``count`` tool calls to c1: the ids ``feed`` gave their events."""
    for n in range(count):
        await engine.tool("a1", "c1", "echo", {"n": n})
    return [seq for seq, _event in feed.ring]


async def _first_after(feed: CardFeed, last_id: int) -> bytes:
    """What a client resuming with ``last_id`` is written first, after the greeting."""
    stream = feed.stream(last_id, heartbeat=60, closing=asyncio.Event())
    try:
        assert (await anext(stream)).startswith(b": arrowgate events")
        return await asyncio.wait_for(anext(stream), 10)
    finally:
        await stream.aclose()


async def test_a_feed_made_again_never_gives_an_earlier_feeds_ids(
        tmp_path: Any, monkeypatch: Any) -> None:
    engine = await _tool_engine(tmp_path)
    try:
        # Both feeds made in the same millisecond, or the clock set back between them.
        _stop_the_feeds_clock(monkeypatch)
        old = CardFeed(engine, "c1")
        old_ids = await _numbered(engine, old, 3)
        old.close()
        new = CardFeed(engine, "c1")
        new_ids = await _numbered(engine, new, 3)
        assert not set(old_ids) & set(new_ids), (old_ids, new_ids)
        # A client of the old feed resumes: told it may have lost events, never silence.
        first = await _first_after(new, old_ids[0])
        assert first.startswith(b"event: events.dropped\n"), first
        # A client of this feed resumes where it was.
        first = await _first_after(new, new_ids[0])
        assert first.startswith(f"id: {new_ids[1]}\n".encode()), first
        new.close()
    finally:
        engine.close()


async def test_feeds_of_one_card_in_two_processes_number_apart(
        tmp_path: Any, monkeypatch: Any) -> None:
    """Two servers on one store, each with a feed for c1 made at the same moment: an id
    of one is unknown to the other."""
    engine = await _tool_engine(tmp_path)
    other = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    try:
        _stop_the_feeds_clock(monkeypatch)
        here = CardFeed(engine, "c1")
        there = CardFeed(other, "c1")
        ids_here = await _numbered(engine, here, 3)
        for n in range(3):
            await other.tool("a1", "c1", "echo", {"n": n})
        ids_there = [seq for seq, _event in there.ring]
        assert len(ids_there) >= 3 and not set(ids_here) & set(ids_there)
        first = await _first_after(there, ids_here[0])
        assert first.startswith(b"event: events.dropped\n"), first
        here.close()
        there.close()
    finally:
        other.close()
        engine.close()


async def test_event_ids_are_exact_in_javascript(tmp_path: Any) -> None:
    """Every id a feed gives is an integer a JavaScript client holds exactly (below 2**53):
    a canvas app that keeps the newest id as a number resumes from that very id.

    Found in round 23: the feeds' new random slots gave ids near 2**62, which
    `Number()` rounds (a client resuming from a rounded id is told events.dropped)."""
    engine = await _tool_engine(tmp_path)
    try:
        feeds = [CardFeed(engine, "c1") for _ in range(50)]
        ids = await _numbered(engine, feeds[-1], 2)
        for feed in feeds:
            assert 0 < feed.base < feed.base + events._SPAN <= 2**53, feed.base
            feed.close()
        assert all(0 < i < 2**53 for i in ids), ids
    finally:
        engine.close()


def test_feeds_are_made_however_many_slots_were_drawn(monkeypatch: Any) -> None:
    """Drawing a feed's slot always ends, and its ids stay in range, however many feeds
    this process made (each slot drawn is remembered, so that none repeats).

    Found in round 23: with every slot drawn, `_fresh_base` looked for a new one
    for ever (a service that made that many feeds would hang making the next)."""
    import threading

    monkeypatch.setattr(events, "_SLOTS", 4)
    monkeypatch.setattr(events, "_DRAWN", set())
    bases: list[int] = []

    def draw() -> None:
        for _ in range(10):
            bases.append(events._fresh_base())

    drawing = threading.Thread(target=draw, daemon=True)
    drawing.start()
    drawing.join(5)
    assert not drawing.is_alive(), f"drawing a slot never ended after {len(bases)} feeds"
    assert all(4 * events._SPAN <= b < 8 * events._SPAN for b in bases), bases
