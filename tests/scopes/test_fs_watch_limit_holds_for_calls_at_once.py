"""A card holds at most 8 watches even when it asks for many at once, and a watch ended
frees its place (SPEC §8.3: "a card holds at most 8 watches (``CARD_LIMIT``)").

Held for watches asked one after another (test_fs_hardening.py); here twelve asked at
once, of several folders: each is armed in a thread, and a count taken before the
arming would let them all through.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import WATCH_LIMIT, ConfinedFiles
from tests.conftest import polls

from ..conftest import manifest, offer_install


async def test_twelve_watches_at_once_give_eight(make_engine: Any, tmp_path: Path) -> None:
    """Exactly 8 are made, 4 refused CARD_LIMIT; another card still gets its own; one
    ended (its folder removed) makes room for one more."""
    ws = tmp_path / "ws"
    for n in range(12):
        (ws / f"d{n}").mkdir(parents=True)
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")))
    await engine.create_workspace("w1", ws)
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    for card in ("c1", "c2"):
        await engine.add_node({"id": card, "type": "card", "package": "acme.fs"},
                              workspace="w1")
    # WHEN c1 asks for twelve watches at once
    answers = await asyncio.gather(*(engine.call("c1", "fs.watch", None, {"path": f"d{n}"})
                                     for n in range(12)))
    # THEN eight are made and four refused
    made = [d for d in answers if d.outcome == "ok"]
    refused = [(d.code, d.reason) for d in answers if d.outcome != "ok"]
    assert len(made) == WATCH_LIMIT == 8
    assert refused == [("CARD_LIMIT", "watch-limit")] * 4
    # AND c2 holds watches of its own
    assert (await engine.call("c2", "fs.watch", None, {"path": "."})).outcome == "ok"
    # AND a watch that ends (its folder removed) frees its place
    fs = engine.world.fs
    assert isinstance(fs, ConfinedFiles)
    watched = next(n for n, d in enumerate(answers) if d.outcome == "ok")
    (ws / f"d{watched}").rmdir()
    for _ in polls():
        if len(fs.watches) == WATCH_LIMIT:
            break
        await asyncio.sleep(0.02)
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert d.outcome == "ok", d.message
    d = await engine.call("c1", "fs.watch", None, {"path": "."})
    assert (d.code, d.reason) == ("CARD_LIMIT", "watch-limit")
    engine.close()
