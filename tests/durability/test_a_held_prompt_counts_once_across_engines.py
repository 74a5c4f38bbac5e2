"""A held prompt counted against its card's prompt window when it was made, and not again
when a person approves it (SPEC §7) — also when the approval is made through another
engine on the same store, whose window is the one window of the card (SPEC §10: one
rolling window per card and key however many processes admit calls), on SQLite and on
PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

from engine.app.replay import VirtualClock
from tests.conftest import manifest, offer_install, open_store


async def test_approvals_through_another_engine_never_fill_the_window(
        store: str, tmp_path: Path) -> None:
    """Six held through A at 1000..1005, approved through B at 1030 while the window is
    full; at 1060.5 the window holds the five made at 1001..1005, so one more prompt
    goes through either engine and the next is refused, retry_after to 1061."""
    clock = VirtualClock(1000.0)
    a = open_store(store, clock=clock)
    b = None
    try:
        # GIVEN six prompts held through engine A, a second apart
        (tmp_path / "ws").mkdir()
        await a.create_workspace("w1", tmp_path / "ws")
        await offer_install(a, manifest("acme.p", {"agents.prompt": {}}))
        await a.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
        await a.add_node({"id": "a1", "type": "agent", "status": "working",
                          "dangerous": True}, workspace="w1")
        await a.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
        held = []
        for i in range(6):
            clock.t = 1000.0 + i
            d = await a.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})
            assert d.outcome == "held", d
            held.append(d.prompt)
        # WHEN engine B, another process on the store, approves them all at 1030
        b = open_store(store, clock=clock)
        clock.t = 1030.0
        assert (await b.call("c1", "agents.prompt", "a1", {"text": "full"})).code == \
            "RATE_LIMITED"  # the window B sees is A's: full
        for pid in held:
            approved = await b.approve_hold(pid, text_sha256=b.prompt(pid).text_sha256)
            assert approved.outcome == "queued", approved
        # THEN at 1060.5 the window holds the five made at 1001..1005, not the approvals
        clock.t = 1060.5
        assert (await a.call("c1", "agents.prompt", "a1", {"text": "sixth"})).outcome == \
            "held"
        refused = await b.call("c1", "agents.prompt", "a1", {"text": "seventh"})
        assert (refused.code, refused.retry_after) == ("RATE_LIMITED", 0.5), refused
    finally:
        if b is not None:
            b.close()
        a.close()
