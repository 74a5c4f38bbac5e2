"""SPEC §1/§8.3: workspaces are apart; `fs.watch` "reports nothing outside the folder".

Removing a card does not end its `fs.watch`: the watch task only looks at the card when
the next change arrives, and then by id (engine/effects/files.py `_watch_loop`:
``node = engine.state.canvas.node(card)``, with the *old* package's grant). When a
person removes card c1 of workspace A and puts an unrelated card c1 (a package with no
permission at all) on workspace B, A's file changes keep being reported as
``fs.changed`` for card c1 — now a card of B, with no `fs.read` (w16).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles

from ..conftest import manifest, offer_install


async def test_a_removed_cards_watch_reports_nothing_to_a_new_card_with_its_id(
        make_engine: Any, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    sunk: list[Any] = []
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=sunk.append)
    await engine.create_workspace("A", a)
    await engine.create_workspace("B", b)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await offer_install(engine, manifest("acme.blank", {}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="A")
    assert (await engine.call("c1", "fs.watch", None, {"path": "."})).outcome == "ok"
    await asyncio.sleep(0.3)  # let the watcher start
    (a / "first.txt").write_text("x")
    for _ in range(100):
        if any(e.type == "fs.changed" for e in sunk):
            break
        await asyncio.sleep(0.05)
    assert any(e.type == "fs.changed" for e in sunk), "the watch saw no change at all"
    await engine.remove_node("c1")
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.blank"}, workspace="B")
    sunk.clear()
    (a / "merger-plan.txt").write_text("y")
    await asyncio.sleep(1.0)
    leaked = [e.data for e in sunk if e.type == "fs.changed"]
    assert leaked == [], f"workspace A's file changes reported to card c1 of B: {leaked}"
