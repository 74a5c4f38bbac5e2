"""A refusal for want of a plain arrow names a few of the port arrows between the two nodes
and counts the rest: its message stays short however many there are (rule: hostile input
never floods; a refused call costs the engine little, as refusals are never counted).

(Found in round 30 by a flood probe: a canvas file drew 16,000 port arrows between a card
and an agent; every refused call of the card named all of them — 300 KB of message, built
in 115 ms on the engine's loop, sent back each time.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install

#: Port arrows between the card and the agent.
N = 2000


async def test_a_refusal_names_a_few_port_arrows_and_counts_the_rest(
        make_engine: Any, tmp_path: Path) -> None:
    """The message names the smallest ids and how many more there are, in a few hundred
    characters."""
    engine: Engine = make_engine()
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}},
                                         ports={"inputs": [], "outputs": ["out"]}))
    box = {"x": 0, "y": 0, "width": 1, "height": 1}
    ids = [f"port-{i:05d}" for i in range(N)]
    doc = {"nodes": [{"id": "c1", "type": "text", "text": "c", **box},
                     {"id": "a1", "type": "text", "text": "a", **box}],
           "edges": [{"id": i, "fromNode": "c1", "toNode": "a1"} for i in reversed(ids)],
           "arrowgate": {"version": 1,
                         "nodes": {"c1": {"type": "card", "package": "acme.p"},
                                   "a1": {"type": "agent", "name": "A"}},
                         "edges": {i: {"from_port": "out", "to_port": "prompt"}
                                   for i in ids}}}
    await engine.import_canvas("w", tmp_path, doc)

    d = await engine.call("c1", "agents.prompt", "a1", {"text": "hi"})
    assert (d.code, d.reason) == ("PERMISSION_DENIED", "not-connected")
    assert "only a port arrow connects c1 and a1" in d.message, d.message
    assert len(d.message) < 600, f"the refusal's message is {len(d.message)} characters"
    assert "port-00000" in d.message and f"{N - 3:,} more" in d.message, d.message
    assert "port-00003" not in d.message
