"""A card holds at most `WATCH_LIMIT` file watches (CARD_LIMIT, ``watch-limit``).

Rule: the limit counts only the watches that still hold for this card node: a watch
belongs to the node it was made for (its id, workspace and package), not to the id,
so the watches of a card removed in another process never count against a new card
given its id.

(Found by the reviewer: the limit counted by card id only; a removed card's watches
stay in `ConfinedFiles._watchers` until its folder next changes when another process
removed it, and a new c1 was refused its first watch.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import WATCH_LIMIT, ConfinedFiles

from ..conftest import manifest, offer_install


async def test_a_removed_cards_watches_do_not_count_against_a_new_card_with_its_id(
        make_engine: Any, tmp_path: Path) -> None:
    """c1 (acme.fs) holds every watch; another process puts c1 of acme.other in its place."""
    # GIVEN card c1 holding all its watches, in the process that runs them
    (tmp_path / "ws").mkdir()
    fs = ConfinedFiles(data_dir=tmp_path / "data")
    engine = make_engine(world=World(net=None, fs=fs))
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await offer_install(engine, manifest("acme.other", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    for _ in range(WATCH_LIMIT):
        assert (await engine.call("c1", "fs.watch", None, {"path": "."})).outcome == "ok"
    refused = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert (refused.code, refused.reason) == ("CARD_LIMIT", "watch-limit")
    # WHEN another process removes c1 and puts a card of another package under its id
    other = make_engine()
    await other.remove_node("c1")
    await other.add_node({"id": "c1", "type": "card", "package": "acme.other"},
                         workspace="w1")
    # THEN the new c1's first watch is not refused for the old card's watches
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.outcome == "ok", f"{d.code} {d.reason}: {d.message}"
    tasks = list(fs.watches.values())
    engine.close()
    await asyncio.gather(*tasks, return_exceptions=True)
