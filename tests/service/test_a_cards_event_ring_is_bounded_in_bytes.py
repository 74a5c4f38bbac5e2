"""A card's event feed keeps at most `KEEP_BYTES` of events for resumption, not only the
last `KEEP` (SPEC §8 "Bounds": hostile input never floods the engine).

The feed keeps the card's last events for a client that reconnects with
``Last-Event-ID`` or pushes back. Each may hold up to ``max_payload`` (256 KiB): a
``tool.call`` carries the agent's arguments, ``port.data`` what another card or a note
sent. An agent that opens and cancels tool calls to a card needs no rate to fill it, so
1,000 of them held 256 MB of one card's feed in memory, and as much again for every
card it reaches. Past `KEEP_BYTES` the oldest go, and a client behind them is told
``events.dropped``, as when it falls behind `KEEP` events.

(Found in round 27.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from engine import file_digests
from engine.service.events import CardFeed

#: `engine.service.events.KEEP_BYTES`: 4 MiB of events a card (16 of 256 KiB).
KEEP_BYTES = 4 * 1024 * 1024

_TOOLS = {"name": "acme.t", "version": "1.0.0", "permissions": {},
          "tools": [{"name": "take", "input": {"type": "object"}}]}


async def test_the_feed_keeps_at_most_keep_bytes(make_engine: Any, tmp_path: Path) -> None:
    """45 tool calls of 100 KiB of arguments each: the feed keeps the newest that fit in
    KEEP_BYTES, always the newest one; the numbers stay consecutive."""
    engine = make_engine()
    await engine.create_workspace("w1", str(tmp_path))
    await engine.offer("acme.t", _TOOLS, file_digests({"manifest.json": json.dumps(_TOOLS)}))
    await engine.install("acme.t")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.t"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "a1", "to": "c1"})
    feed = CardFeed(engine, "c1")
    try:
        # GIVEN an agent opening and cancelling tool calls with large arguments
        for i in range(45):
            d = await engine.tool("a1", "c1", "take", {"blob": f"{i:03}" + "x" * 100_000})
            assert d.allowed, d.message
            await engine.cancel_tool(d.value["id"], by="agent:a1")
        # THEN the card's feed holds at most KEEP_BYTES of them, the newest kept
        kept = [event for _seq, event in feed.ring]
        assert sum(len(orjson.dumps(e.data)) for e in kept) <= KEEP_BYTES
        calls = [e for e in kept if e.type == "tool.call"]
        assert len(calls) < 45
        assert calls[-1].data["args"]["blob"].startswith("044")
        seqs = [seq for seq, _event in feed.ring]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        # A huge event alone is still kept: the newest always is.
        d = await engine.tool("a1", "c1", "take", {"blob": "y" * 200_000})
        assert d.allowed
        assert feed.ring[-1][1].data["args"]["blob"] == "y" * 200_000
    finally:
        feed.close()
