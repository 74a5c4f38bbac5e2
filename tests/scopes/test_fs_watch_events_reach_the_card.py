"""A card that calls `fs.watch` takes `fs.changed` (and `fs.watch.ended`) from its own
subscription — so from `GET /v1/events` too — and no other card does.

SPEC §3: `fs.read` unlocks `fs.watch`; README: "`fs.watch` — (the card then gets
`fs.changed` events)"; SPEC §10.1: a card's events come through `GET /v1/events`,
which streams the card's `Engine.subscribe` subscription, gated when sent.

(Found by a helper: `fs.changed` and `fs.watch.ended` were not in `CARD_EVENTS`
(engine/services/subscriptions.py), so `EventHub.publish` dropped them and only the
engine's ``sink`` heard of a change.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles
from tests.conftest import polls

from ..conftest import manifest, offer_install


async def test_a_watching_card_takes_fs_changed_from_its_subscription(
        make_engine: Any, tmp_path: Path) -> None:
    """c1's watch reports a new file to c1's subscription; c2's subscription takes nothing."""
    # GIVEN card c1 watching its workspace folder, and card c2 of the same package
    ws = tmp_path / "ws"
    ws.mkdir()
    sunk: list[Any] = []
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=sunk.append)
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    await engine.add_node({"id": "c2", "type": "card", "package": "acme.fs"}, workspace="w1")
    other = engine.subscribe("c2")
    async with engine.subscribe("c1") as sub:
        d = await engine.call("c1", "fs.watch", None, {"path": "."})
        assert d.outcome == "ok", d.message
        # (no pause: fs.watch answers only once its folder is watched, treewatch.arm)
        # WHEN a file is written in the folder
        (ws / "notes.txt").write_text("x")
        taken: list[Any] = []
        for _ in polls():
            taken += [e for e in sub.ready() if e.type == "fs.changed"]
            if taken or any(e.type == "fs.changed" for e in sunk):
                break
            await asyncio.sleep(0.05)
        assert any(e.type == "fs.changed" for e in sunk), "the watch saw no change at all"
        await asyncio.sleep(0.1)
        taken += [e for e in sub.ready() if e.type == "fs.changed"]
        # THEN c1 takes it, and only c1
        assert [e.data["path"] for e in taken] == ["notes.txt"], \
            "fs.changed went to the sink only, never to the card's subscription"
        assert [e for e in other.ready() if e.type.startswith("fs.")] == []
    other.close()
