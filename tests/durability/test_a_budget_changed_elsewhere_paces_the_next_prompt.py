"""A workspace's prompt budget changed through one engine paces the very next prompt
another engine on the store delivers, as it paces the changing engine's own (SPEC §6
"Workspace budget", §10: every rule holds across all engines on one database).

Each engine paces delivery with a limiter of its own, made from the workspace's
budget; the engine that changes the budget starts its pacing afresh
(`Prompts.forget_budget`). An engine that learns of the change from the store
must do the same: a limiter of the old budget, or a wait on it, is let go.

(Found in round 18: the other engine kept its limiter of the old budget, and its
wait on it, until it restarted: with the budget raised from 1 prompt an hour to 100
a second through the TUI or another server, a prompt made through this engine to a
waiting agent stayed queued for up to an hour.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.conftest import manifest, offer_install, until
from tests.durability.targets import Target


async def test_a_budget_raised_elsewhere_delivers_the_next_prompt_at_once(
        target: Target, tmp_path: Path) -> None:
    """Budget 1 an hour, used up through B; raised through A: B's next prompt goes at once."""
    a = target.open()
    b = None
    try:
        (tmp_path / "ws").mkdir()
        await a.create_workspace("w1", tmp_path / "ws", settings={"budget": [1, 3600]})
        await offer_install(a, manifest("acme.p", {"agents.prompt": {}}))
        await a.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
        for i in (1, 2, 3):
            await a.add_node({"id": f"a{i}", "type": "agent", "status": "waiting"},
                             workspace="w1")
            await a.add_arrow({"id": f"e{i}", "from": "c1", "to": f"a{i}"})
        b = target.open()
        first = await b.call("c1", "agents.prompt", "a1", {"text": "one"})
        second = await b.call("c1", "agents.prompt", "a2", {"text": "two"})
        assert (b.prompt(first.prompt).state, b.prompt(second.prompt).state) == (
            "delivered", "queued")  # the budget's one unit this hour went to a1
        await a.set_settings("w1", {"budget": [100, 1]})
        third = await b.call("c1", "agents.prompt", "a3", {"text": "three"})
        assert third.outcome == "queued"
        # B's next prompt is delivered under the new budget, as A would deliver it.
        await until(lambda: b.prompt(third.prompt).state == "delivered")
        await asyncio.sleep(0)
        b.catch_up()
        assert {p.id: p.state for p in b.prompts()} == {
            first.prompt: "delivered", second.prompt: "delivered", third.prompt: "delivered"}
    finally:
        a.close()
        if b is not None:
            b.close()
