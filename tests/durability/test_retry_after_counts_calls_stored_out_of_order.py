"""``retry_after`` is (the oldest counted call in the window) + P − t (SPEC §6) also when the
store holds a card's counted calls out of time order — two engines deciding at once, one
stamping a little before the other but committing after it (README: "Two decisions made
at once through two engines may be stamped out of the log's order") — on both stores.

(Found in round 27: the window took the stored order for time order. A refusal named the
wait for the call stored first, not the one made first: told 30 s, the card was refused
again then, and again, until the oldest had left.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install
from tests.durability.targets import Target

#: Six counted prompts of c1, in the order the store holds them (not their times').
STORED = [1010.0, 1005.0, 1020.0, 1001.0, 1030.0, 1015.0]


async def test_retry_after_waits_for_the_oldest_call_in_time(
        target: Target, make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Six stored out of order, the oldest made at 1001: at 1040 the wait is 21 s; at 1061
    one call goes, and the next waits for the call made at 1005 (4 s)."""
    engine = make_engine()
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "status": "working"}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    engine.close()
    # GIVEN the six counted calls as two engines deciding at once may leave them
    for t in STORED:
        target.execute(f"insert into rate_events (card, key, t) values ('c1', 'prompt', {t!r})")
    clock.t = 1040.0
    engine = make_engine()
    # WHEN the card prompts with the window full
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "7th"})
    # THEN it waits until the call made first (at 1001) has left
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 21.0), d
    clock.t = 1061.0
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "now"})).allowed
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "and the next"})
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 4.0), d
