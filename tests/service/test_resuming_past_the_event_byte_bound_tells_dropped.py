"""A client resuming a card's feed with ``Last-Event-ID`` behind what the feed keeps by
bytes (`KEEP_BYTES`, tool calls with large arguments, far fewer than `KEEP` events) is
told ``events.dropped`` with the count of events it missed, then given the oldest kept,
numbered on from there (SPEC §8 "Bounds", §10.1 event shape); one resuming inside the
ring is told nothing dropped.

(Round 27 review: flood27's byte bound on the ring met tools27's tool.call events only
in a test of the ring itself, never of a client resuming across it.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from engine import Engine, World, file_digests
from engine.service.events import CardFeed

_TOOLS = {"name": "acme.t", "version": "1.0.0", "permissions": {},
          "tools": [{"name": "take", "input": {"type": "object"}}]}
BLOB = 10_000
KEPT_BYTES = 5 * BLOB  # room for four such events and a bit


async def _frames(feed: CardFeed, last_id: int, count: int) -> list[dict[str, Any]]:
    """The first ``count`` frames a client resuming after ``last_id`` is written, parsed."""
    stream = feed.stream(last_id, heartbeat=60, closing=asyncio.Event())
    out = []
    try:
        assert (await anext(stream)).startswith(b": arrowgate events")
        while len(out) < count:
            text = (await asyncio.wait_for(anext(stream), 10)).decode()
            fields = dict(line.split(": ", 1) for line in text.strip().split("\n"))
            out.append({"id": int(fields["id"]) if "id" in fields else None,
                        "event": fields["event"], "data": json.loads(fields["data"])})
    finally:
        await stream.aclose()
    return out


async def test_resuming_behind_the_byte_bound_is_told_how_many_were_dropped(
        tmp_path: Path) -> None:
    engine = Engine.open(tmp_path / "a.db", world=World(net=None, fs=None))
    feed: CardFeed | None = None
    try:
        await engine.create_workspace("w1", str(tmp_path))
        await engine.offer("acme.t", _TOOLS,
                           file_digests({"manifest.json": json.dumps(_TOOLS)}))
        await engine.install("acme.t")
        await engine.add_node({"id": "c1", "type": "card", "package": "acme.t"},
                              workspace="w1")
        await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
        feed = CardFeed(engine, "c1", keep_bytes=KEPT_BYTES)
        # GIVEN a client that saw the first tool call's event, then twelve more calls
        for i in range(13):
            d = await engine.tool("a1", "c1", "take", {"blob": f"{i:02}" + "x" * BLOB})
            assert d.allowed, d.message
        seen = feed.base + 1
        kept = [seq for seq, _event in feed.ring]
        assert len(kept) < 12 and kept[-1] == feed.seq
        # WHEN it resumes after the one it saw
        dropped, first = await _frames(feed, seen, 2)
        # THEN it is told how many it missed, exactly, and goes on from the oldest kept
        assert dropped == {"id": None, "event": "events.dropped",
                           "data": {"type": "events.dropped",
                                    "data": {"count": kept[0] - 1 - seen}}}, dropped
        assert (first["id"], first["event"]) == (kept[0], "tool.call"), first
        assert first["data"]["data"]["args"]["blob"].startswith(f"{kept[0] - feed.base - 1:02}")
        # AND a client inside the ring is given the next one, nothing dropped
        (inside,) = await _frames(feed, kept[1], 1)
        assert (inside["id"], inside["event"]) == (kept[2], "tool.call"), inside
    finally:
        if feed is not None:
            feed.close()
        engine.close()
