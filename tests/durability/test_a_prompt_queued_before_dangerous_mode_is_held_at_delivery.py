"""A prompt queued for an agent that another engine on the store then puts in dangerous
mode never reaches the agent without a person's OK (SPEC §7; README: held at delivery):
the engine that delivers it, caught up, holds it — its ``held`` row, ``prompt.held`` to its
card, nothing handed to the agent — and a person's approval then delivers it. On SQLite and
PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import Engine

from ..conftest import manifest, offer_install


async def test_dangerous_mode_set_elsewhere_holds_the_queued_prompt_at_delivery(
        make_engine: Any, tmp_path: Path) -> None:
    """The service queued c1's prompt to the working a1; the app set a1 dangerous; at
    a1's turn's end the service holds the prompt, and delivers it once approved."""
    # GIVEN c1's prompt queued through the service for a1, at work
    service: Engine = make_engine()
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    await service.create_workspace("w1", tmp_path / "ws")
    await offer_install(service, manifest("acme.p", {"agents.prompt": {}}))
    await service.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    await service.add_node({"id": "a1", "type": "agent", "status": "working"}, workspace="w1")
    await service.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    queued = await service.call("c1", "agents.prompt", "a1", {"text": "rm -rf build"})
    assert queued.outcome == "queued" and queued.prompt is not None
    pid = str(queued.prompt)
    sub = service.subscribe("c1")
    # WHEN the app, another engine on the store, puts a1 in dangerous mode
    app = make_engine()
    await app.set_node("a1", {"dangerous": True})
    assert app.prompt(pid).state == "queued"
    # AND a1's turn ends, told to the service
    await service.agent_replied("a1", "done")
    # THEN the prompt is held, not delivered: its held row, the card told
    assert service.prompt(pid).state == "held"  # type: ignore[union-attr]
    assert [r["outcome"] for r in service.log_rows(arrow="e1")] == ["queued", "held"]
    assert [e.data.get("prompt") for e in sub.ready() if e.type == "prompt.held"] == [pid]
    assert service.state.canvas.node("a1").data.get("status") == "waiting"  # type: ignore[union-attr]
    # AND the person's OK, given in the app, delivers it
    app.catch_up()
    held = app.prompt(pid)
    assert held is not None and held.state == "held"
    assert (await app.approve_hold(pid, text_sha256=held.text_sha256)).outcome == "queued"
    assert app.prompt(pid).state == "delivered"
