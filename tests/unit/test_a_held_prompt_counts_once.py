"""A held prompt counted against its card's rate window when it was made (SPEC §5: a call
counts once it was held) and is not counted again when a person approves it (SPEC §7):
approvals go through however full the window is, and leave it as the holds made it.
A hold rejected still counted: it was accepted, and refusing it was the person's.
On SQLite and on PostgreSQL (the window across engines: tests/durability's
test_a_held_prompt_counts_once_across_engines).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.replay import VirtualClock

from ..conftest import manifest, offer_install, open_store


async def test_approvals_neither_wait_for_nor_fill_the_window(
        store: str, tmp_path: Path) -> None:
    """Six held at 1000..1005 (one rejected), five approved at 1030 though the window is
    full; at 1060.5 the window holds the five made at 1001..1005, not the approvals."""
    clock = VirtualClock(1000.0)
    engine = open_store(store, clock=clock)
    try:
        await _held_six_approved_five(engine, tmp_path, clock)
    finally:
        engine.close()


async def _held_six_approved_five(engine: Any, tmp_path: Path, clock: VirtualClock) -> None:
    await engine.create_workspace("w1", tmp_path)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await engine.add_node({"id": "a1", "type": "agent", "status": "working",
                           "dangerous": True}, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    held = []
    for i in range(6):
        clock.t = 1000.0 + i
        d = await engine.call("c1", "agents.prompt", "a1", {"text": f"p{i}"})
        assert d.outcome == "held", d
        held.append(d.prompt)
    clock.t = 1030.0
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "full"})
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 30.0), d
    await engine.reject_hold(held[0])
    for pid in held[1:]:
        digest = engine.prompt(pid).text_sha256
        d = await engine.approve_hold(pid, text_sha256=digest)
        assert d.code is None and engine.prompt(pid).state == "queued", d
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "still full"})
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 30.0), d
    clock.t = 1060.5
    await engine.set_node("a1", {"dangerous": False})
    assert (await engine.call("c1", "agents.prompt", "a1", {"text": "p0 left"})).allowed
    d = await engine.call("c1", "agents.prompt", "a1", {"text": "p1 has not"})
    assert (d.code, d.retry_after) == ("RATE_LIMITED", 0.5), d
