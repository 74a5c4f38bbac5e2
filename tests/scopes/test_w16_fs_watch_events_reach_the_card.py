"""SPEC §3: `fs.read` unlocks `fs.watch`; README: "`fs.watch` — (the card then gets
`fs.changed` events)"; SPEC §10.1: a card's events come through `GET /v1/events`,
which streams the card's `Engine.subscribe` subscription.

`fs.changed` is not among the event types a subscription carries
(engine/services/subscriptions.py `CARD_EVENTS`): `EventHub.publish` drops it, so the
only place it goes is the engine's ``sink``. A card that calls `fs.watch` — through the
Python API's subscription or the service's event stream — never hears of a change (w16).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def test_a_watching_card_takes_fs_changed_from_its_subscription(
        make_engine: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    sunk: list[Any] = []
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=sunk.append)
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    async with engine.subscribe("c1") as sub:
        d = await engine.call("c1", "fs.watch", None, {"path": "."})
        assert d.outcome == "ok", d.message
        await asyncio.sleep(0.3)  # let the watcher start
        (ws / "notes.txt").write_text("x")
        taken: list[Any] = []
        for _ in range(100):
            taken += [e for e in sub.ready() if e.type == "fs.changed"]
            if taken or any(e.type == "fs.changed" for e in sunk):
                break
            await asyncio.sleep(0.05)
        assert any(e.type == "fs.changed" for e in sunk), "the watch saw no change at all"
        await asyncio.sleep(0.1)
        taken += [e for e in sub.ready() if e.type == "fs.changed"]
        assert [e.data["path"] for e in taken] == ["notes.txt"], \
            "fs.changed went to the sink only, never to the card's subscription"
