"""A watch belongs to the card node it was made for: removing the card (or revoking
its `fs.read`) ends its watches at once, and a card added later under the same id —
in another workspace, or of another package — hears nothing of them.

SPEC §1/§8.3: workspaces are apart; `fs.watch` "reports nothing outside the folder";
§4.3: a narrowing ends what it took consent from at once.

(Found by a helper: `_watch_loop` looked at the card only when the next change came,
and then by id, so once card c1 of workspace A was removed and an unrelated c1 with no
permission put on workspace B, A's file changes were reported as `fs.changed` to c1.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles
from tests.conftest import polls

from ..conftest import manifest, offer_install


async def test_a_removed_cards_watch_reports_nothing_to_a_new_card_with_its_id(
        make_engine: Any, tmp_path: Path) -> None:
    """Removing c1 ends its watch at once; the c1 put on B later is told nothing of A."""
    # GIVEN card c1 of A watching A's folder, which has reported a change
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
    # (no pause: fs.watch answers only once its folder is watched, treewatch.arm)
    (a / "first.txt").write_text("x")
    for _ in polls():
        if any(e.type == "fs.changed" for e in sunk):
            break
        await asyncio.sleep(0.05)
    assert any(e.type == "fs.changed" for e in sunk), "the watch saw no change at all"
    # WHEN c1 is removed, and an unrelated card c1 is put on workspace B
    await engine.remove_node("c1")
    fs = engine.world.fs
    assert isinstance(fs, ConfinedFiles) and not fs.watches, "the watch outlived its card"
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.blank"}, workspace="B")
    sunk.clear()
    # THEN a change in A's folder is reported to nobody
    (a / "merger-plan.txt").write_text("y")
    await asyncio.sleep(1.0)
    leaked = [e.data for e in sunk if e.type == "fs.changed"]
    assert leaked == [], f"workspace A's file changes reported to card c1 of B: {leaked}"


async def test_revoking_fs_read_ends_the_cards_watches_at_once(
        make_engine: Any, tmp_path: Path) -> None:
    """A revoke ends the watch when it is made, not at the next change: withdrawn."""
    # GIVEN card c1 watching its workspace folder
    sunk: list[Any] = []
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=sunk.append)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    watch = (await engine.call("c1", "fs.watch", None, {"path": "."})).value["watch"]
    # WHEN fs.read is revoked
    await engine.revoke("acme.fs", "fs.read")
    # THEN the watch is gone at once, and ends with fs.watch.ended, reason withdrawn
    fs = engine.world.fs
    assert isinstance(fs, ConfinedFiles) and not fs.watches
    ended: list[Any] = []
    for _ in polls():  # the task runs its end once its watch lets it go
        ended = [e.data for e in sunk if e.type == "fs.watch.ended"]
        if ended:
            break
        await asyncio.sleep(0.02)
    assert ended == [{"watch": watch, "workspace": "w1", "package": "acme.fs",
                      "reason": "withdrawn"}]
