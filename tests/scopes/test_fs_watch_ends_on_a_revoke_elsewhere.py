"""A watch ends as soon as its engine learns of a revoke another process made.

§4.3: a narrowing ends what it took consent from at once. A revoke made here ends
the card's watches as it is made (`World.narrowed`); one made by another process on
the same store ends them when this engine catches up with it (`Context.on_caught_up`).

(Found by a helper in round 18: a narrowing caught up from another process did not
end this engine's watches; each went on until its next file change, which it then
judged on the caught-up state — and a change seen before the catch-up was sent.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from engine import World
from engine.effects.files import ConfinedFiles
from tests.conftest import polls

from ..conftest import manifest, offer_install


async def test_a_revoke_made_elsewhere_ends_the_watch_at_catch_up(
        make_engine: Any, tmp_path: Path) -> None:
    sunk: list[Any] = []
    engine = make_engine(world=World(net=None, fs=ConfinedFiles(data_dir=tmp_path / "data")),
                         sink=sunk.append)
    (tmp_path / "ws").mkdir()
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.fs", {"fs.read": {}}))
    await engine.add_node({"id": "c1", "type": "card", "package": "acme.fs"}, workspace="w1")
    watch = (await engine.call("c1", "fs.watch", None, {"path": "."})).value["watch"]
    fs = engine.world.fs
    assert isinstance(fs, ConfinedFiles) and fs.watches
    # Another process (an engine of its own on the same store) revokes fs.read.
    other = make_engine()
    await other.revoke("acme.fs", "fs.read")
    engine.catch_up()
    assert not fs.watches, "the watch outlived a revoke this engine had caught up with"
    ended: list[Any] = []
    for _ in polls():  # the task runs its end once its watch lets it go
        ended = [e.data for e in sunk if e.type == "fs.watch.ended"]
        if ended:
            break
        await asyncio.sleep(0.02)
    assert ended == [{"watch": watch, "workspace": "w1", "package": "acme.fs",
                      "reason": "withdrawn"}]
