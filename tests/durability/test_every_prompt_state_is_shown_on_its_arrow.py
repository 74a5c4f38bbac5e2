"""Each prompt's state is visible on the arrow it travelled (SPEC §6): ``queued``,
``held``, ``delivered``, ``replied``, ``rejected``, ``expired``, ``cancelled`` are each
reached the way a person expects, an ended prompt is never answered again, and each
state is as it was after a restart, on both stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import Engine
from engine.app.replay import VirtualClock
from engine.core.errors import NotFound
from tests.conftest import manifest, offer_install


async def _canvas(engine: Engine, folder: Path) -> None:
    """Card c1 wired to a waiting agent aw (e_w), a dangerous one ad (e_d) and a working
    one aq (e_q)."""
    folder.mkdir()
    await engine.create_workspace("w1", folder)
    await offer_install(engine, manifest("acme.p", {"agents.prompt": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
    for agent, fields in (("aw", {"status": "waiting"}), ("ad", {"dangerous": True}),
                          ("aq", {"status": "working"})):
        await engine.add_node({"id": agent, "type": "agent", **fields}, workspace="w1")
        await engine.add_arrow({"id": f"e_{agent[1]}", "from": "c1", "to": agent})


async def _prompt(engine: Engine, agent: str, text: str) -> str:
    d = await engine.call("c1", "agents.prompt", agent, {"text": text})
    assert d.allowed and d.prompt is not None, d
    return d.prompt


def _on_arrows(engine: Engine) -> dict[str, list[tuple[str, str]]]:
    return {arrow: [(p.text, p.state) for p in engine.prompts(arrow=arrow)]
            for arrow in ("e_w", "e_d", "e_q")}


async def test_each_state_is_reached_shown_on_its_arrow_and_kept(
        make_engine: Any, clock: VirtualClock, tmp_path: Path) -> None:
    """Delivered then replied, queued, held, rejected, expired and cancelled prompts,
    each listed on its arrow in that state, before and after a restart; an ended
    prompt cannot be approved or rejected again."""
    engine = make_engine()
    await _canvas(engine, tmp_path / "ws")
    # delivered, then replied: aw is waiting
    replied = await _prompt(engine, "aw", "answer me")
    assert engine.prompt(replied).state == "delivered"
    await engine.agent_replied("aw", "done")
    assert engine.prompt(replied).state == "replied"
    # queued: aw is working now
    await engine.set_node("aw", {"status": "working"})
    await _prompt(engine, "aw", "wait your turn")
    # expired: held and nobody answers within the hold timeout
    expired = await _prompt(engine, "ad", "silence")
    clock.t += 301
    await engine.expire_due()
    # held, and rejected
    await _prompt(engine, "ad", "still waiting for a person")
    rejected = await _prompt(engine, "ad", "no")
    await engine.reject_hold(rejected)
    # cancelled: its arrow is removed while it is queued
    await _prompt(engine, "aq", "gone with the arrow")
    await engine.remove_arrow("e_q")
    want = {"e_w": [("answer me", "replied"), ("wait your turn", "queued")],
            "e_d": [("silence", "expired"), ("still waiting for a person", "held"),
                    ("no", "rejected")],
            "e_q": [("gone with the arrow", "cancelled")]}
    assert _on_arrows(engine) == want
    # An ended hold is answered once: approving or rejecting it again changes nothing.
    for ended in (expired, rejected):
        digest = engine.prompt(ended).text_sha256
        with pytest.raises(NotFound, match="is not held"):
            await engine.approve_hold(ended, text_sha256=digest)
        with pytest.raises(NotFound, match="is not held"):
            await engine.reject_hold(ended)
    assert _on_arrows(engine) == want
    engine.close()
    again = make_engine()
    assert _on_arrows(again) == want
